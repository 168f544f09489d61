"""``${VAR}`` and ``${VAR:default}`` in YAML values (docs/configuration.md): a ``${`` that
is no reference is a located error (before: kept as text, silently, inside a URL or a
name), and an error about a value that came from a reference names the variable, or the
default used, and the fix (before: only "got 'abc'", with no word of ``${NOPE:abc}``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from terrarium.config import load_single_creature
from terrarium.errors import ConfigErrors


def _creature(tmp_path: Path, body: str) -> Path:
    folder = tmp_path / "c"
    folder.mkdir(exist_ok=True)
    (folder / "config.yaml").write_text(
        "name: c\ncontroller:\n  provider: scripted\n  script: script.yaml\n" + body)
    (folder / "script.yaml").write_text("default_reply: ok\n")
    return folder


def _error(folder: Path) -> str:
    with pytest.raises(ConfigErrors) as err:
        load_single_creature(folder)
    [one] = err.value.errors
    return one.render()


@pytest.mark.parametrize(("written", "says"), [
    ("http://${HOST", "`${HOST` is never closed (no `}` after `${`), in 'http://${HOST'"),
    ("http://${HOST/v1", "`${HOST/v1` is never closed"),
    ("http://${}/v1", "`${}` is not a reference to an environment variable"),
    ("http://${1HOST}/v1", "`${1HOST}` is not a reference to an environment variable"),
    ("http://${ HOST }/v1", "`${ HOST }` is not a reference to an environment variable"),
])
def test_a_dollar_brace_that_is_no_reference_is_a_located_error(
        tmp_path: Path, written: str, says: str) -> None:
    text = _error(_creature(tmp_path, f"  base_url: {written}\n"))
    head, hint = text.split("\n")
    assert head.startswith(f"{tmp_path / 'c' / 'config.yaml'}:5:13: controller.base_url: ")
    assert says in head
    assert hint == "  hint: write ${NAME} or ${NAME:default} (NAME: letters, digits and _, " \
                   "not starting with a digit), or $${ for a literal ${"


def test_a_literal_dollar_brace_is_still_written_doubled(tmp_path: Path) -> None:
    folder = _creature(tmp_path, "description: costs $${HOST\n")
    assert load_single_creature(folder).creatures["c"].config.description == "costs ${HOST"


def test_a_bad_default_names_the_variable_and_the_default(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("TERRARIUM_TEST_NOPE", raising=False)
    text = _error(_creature(tmp_path, "max_iterations: ${TERRARIUM_TEST_NOPE:abc}\n"))
    head, hint = text.split("\n")
    assert head.startswith(f"{tmp_path / 'c' / 'config.yaml'}:5:1: max_iterations: ")
    assert "got 'abc' (written `${TERRARIUM_TEST_NOPE:abc}`: TERRARIUM_TEST_NOPE is not " \
           "set, so its default 'abc' was used)" in head
    assert hint == "  hint: set TERRARIUM_TEST_NOPE to a valid value (export " \
                   "TERRARIUM_TEST_NOPE=...), or change the default after the colon in " \
                   "${TERRARIUM_TEST_NOPE:...}"


def test_a_bad_value_from_the_environment_names_the_variable(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TERRARIUM_TEST_NOPE", "many")
    text = _error(_creature(tmp_path, "max_iterations: ${TERRARIUM_TEST_NOPE:3}\n"))
    assert "(written `${TERRARIUM_TEST_NOPE:3}`: TERRARIUM_TEST_NOPE from the environment)" \
        in text
    assert "hint: set TERRARIUM_TEST_NOPE to a valid value" in text
    monkeypatch.setenv("TERRARIUM_TEST_NOPE", "5")
    assert load_single_creature(_creature(tmp_path, "max_iterations: "
                                          "${TERRARIUM_TEST_NOPE:3}\n")
                                ).creatures["c"].config.max_iterations == 5
