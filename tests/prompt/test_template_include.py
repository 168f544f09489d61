"""``{% include %}`` of prompt fragments: from the creature's folder (and its prompts/) and
its package's prompts/ folder only; anything else refused at load with file:line."""

from __future__ import annotations

from pathlib import Path

import pytest

from terrarium.errors import TemplateError
from terrarium.prompt.templates import compile_template


def _package(tmp_path: Path) -> Path:
    (tmp_path / "kohaku.yaml").write_text("name: pkg\n")
    (tmp_path / "prompts").mkdir()
    (tmp_path / "prompts" / "shared.md").write_text("Be kind, {{ creature }}.\n")
    creature = tmp_path / "creatures" / "a"
    creature.mkdir(parents=True)
    (creature / "local.md").write_text("Local rule.\n")
    return creature


def test_fragments_from_the_creature_and_package_folders_render(tmp_path: Path) -> None:
    creature = _package(tmp_path)
    persona = creature / "prompt.md"
    src = "Hi.\n{% include 'local.md' %}{% include 'shared.md' %}"
    t = compile_template(src, str(persona))
    assert ("creature", 2) in t.needs  # the fragment's variables are checked like the persona's
    assert t.render({"creature": "a"}) == "Hi.\nLocal rule.\nBe kind, a.\n"


@pytest.mark.parametrize("name", ["../../outside.md", "/etc/passwd", "missing.md"])
def test_a_fragment_outside_the_prompt_folders_is_refused_at_load(tmp_path: Path,
                                                                   name: str) -> None:
    creature = _package(tmp_path)
    (tmp_path / "outside.md").write_text("secret\n")
    with pytest.raises(TemplateError, match=r"uses \{% include %\}") as err:
        compile_template(f"one\n{{% include '{name}' %}}", str(creature / "prompt.md"))
    assert err.value.line == 2


def test_a_fragment_is_checked_like_the_persona(tmp_path: Path) -> None:
    creature = _package(tmp_path)
    (creature / "bad.md").write_text("{{ tools.__class__ }}\n")
    with pytest.raises(TemplateError, match="sandbox refuses") as err:
        compile_template("{% include 'bad.md' %}", str(creature / "prompt.md"))
    assert err.value.file == creature / "bad.md"


def test_a_fragment_including_itself_is_refused(tmp_path: Path) -> None:
    creature = _package(tmp_path)
    (creature / "loop.md").write_text("{% include 'loop.md' %}\n")
    with pytest.raises(TemplateError, match="nest"):
        compile_template("{% include 'loop.md' %}", str(creature / "prompt.md"))


def test_a_dynamic_fragment_name_is_refused(tmp_path: Path) -> None:
    creature = _package(tmp_path)
    with pytest.raises(TemplateError, match="quoted fragment"):
        compile_template("{% include creature %}", str(creature / "prompt.md"))
