"""The config loader reads YAML with libyaml when PyYAML has it (a start's eight files in
a fraction of the time) and must read exactly what the pure-Python parser reads: the same
values, the same line and column of every key, the same plain scalars kept for their
written form, and the same error for a file it cannot read."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from terrarium.config import yamlio
from terrarium.config.yamlio import YamlDoc, parse_yaml
from terrarium.errors import ConfigError

pytestmark = pytest.mark.skipif(getattr(yaml, "CSafeLoader", None) is None,
                                reason="PyYAML built without libyaml")

TEXT = """\
name: voice
port: 8080
ratio: 0.5
on: yes
quoted: "42"
single: 'true'
block: |
  two
  lines
count: ${TERRARIUM_TEST_COUNT:4}
words: "${TERRARIUM_TEST_WORD:hello}"
base: &base
  a: 1
  b: [x, "y", 3]
derived:
  <<: *base
  b: []
nested:
  - {k: v, n: 1}
  - plain text here
"""


def _read(monkeypatch: pytest.MonkeyPatch, fast: object) -> YamlDoc:
    monkeypatch.setattr(yamlio, "_LIBYAML", fast)
    return parse_yaml(TEXT, Path("team.yaml"))


def test_libyaml_reads_what_the_pure_parser_reads(monkeypatch: pytest.MonkeyPatch) -> None:
    fast = _read(monkeypatch, yaml.CSafeLoader)
    pure = _read(monkeypatch, None)
    assert fast.data == pure.data
    assert fast.marks == pure.marks
    assert fast.scalars == pure.scalars
    # the unquoted ${N:4} is the number 4, the quoted one stays text; plain numbers keep
    # their written form, quoted ones do not
    assert pure.data["count"] == 4 and pure.data["words"] == "hello"
    assert pure.data["quoted"] == "42" and ("quoted",) not in pure.scalars
    assert pure.scalars[("port",)] == "8080"


@pytest.mark.parametrize("text", [
    'name: "never closed\nother: 1\n',
    "a: 1\n\tb: 2\n",
    "a: [1, 2\n",
    "a: 1\n---\nb: 2\n",
    "a: *missing\n",
])
def test_a_file_libyaml_refuses_gets_the_pure_parsers_error(
        monkeypatch: pytest.MonkeyPatch, text: str) -> None:
    errors = []
    for fast in (yaml.CSafeLoader, None):
        monkeypatch.setattr(yamlio, "_LIBYAML", fast)
        with pytest.raises(ConfigError) as got:
            parse_yaml(text, Path("bad.yaml"))
        errors.append((got.value.message, got.value.location, got.value.suggestion))
    assert errors[0] == errors[1]
