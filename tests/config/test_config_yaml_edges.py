"""YAML edge cases a real config meets: merge keys, an unclosed quote, deep nesting."""

from __future__ import annotations

from pathlib import Path

import pytest

from terrarium.config.yamlio import MAX_DEPTH, parse_yaml
from terrarium.errors import ConfigError


def test_merge_keys_work_and_written_keys_win() -> None:
    doc = parse_yaml("base: &b {x: 1, y: 2}\nmore: &m {z: 0}\nc:\n  <<: [*b, *m]\n  y: 3\n",
                     Path("f.yaml"))
    assert doc.data["c"] == {"x": 1, "y": 3, "z": 0}


def test_merging_a_scalar_is_a_located_error() -> None:
    with pytest.raises(ConfigError, match="merges a mapping") as err:
        parse_yaml("s: &s 1\nc:\n  <<: *s\n", Path("f.yaml"))
    assert err.value.line == 1


def test_unclosed_quote_names_the_line_it_opens_on() -> None:
    with pytest.raises(ConfigError) as err:
        parse_yaml("a: 1\nb: 'open\nc: 2\nd: 3\ne: 4\n", Path("f.yaml"))
    assert err.value.line == 2


@pytest.mark.parametrize("text", [
    "a: " + "[" * 5000 + "]" * 5000 + "\n",
    "a:\n" + "".join("  " * i + f"k{i}:\n" for i in range(1, MAX_DEPTH + 5)) + "    v: 1\n",
])
def test_deep_nesting_is_an_error_not_a_recursion_error(text: str) -> None:
    with pytest.raises(ConfigError, match="nested"):
        parse_yaml(text, Path("f.yaml"))
