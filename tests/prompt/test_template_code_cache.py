"""Prompt templates compiled by a previous start come from the code cache
(``terrarium/codecache.py``, ``prompt/templates.py``): the same template, checks and all,
and only templates that passed every check and include nothing are kept."""

from __future__ import annotations

from pathlib import Path

import pytest

from terrarium.codecache import CodeCache, code_cache
from terrarium.errors import TemplateError
from terrarium.prompt.templates import compile_template, template_calls

SOURCE = ("You are {{ name }}.\n{% for t in tools %}- {{ t }}\n{% endfor %}"
          "{{ call('recall', 'x') }}\n{{ missing.field }}\n")


def _compiled_twice(path: Path, source: str, file: str) -> tuple[CodeCache, CodeCache]:
    caches = []
    for _ in range(2):
        with code_cache(path) as cache:
            assert cache is not None
            before = cache.compiled
            compile_template(source, file)
            cache.compiled -= before  # only what this compile added counts
        caches.append(cache)
    return caches[0], caches[1]


def test_a_kept_template_is_the_template_compiled_anew(tmp_path: Path) -> None:
    file = str(tmp_path / "persona.md")
    fresh = compile_template(SOURCE, file)
    calls = template_calls(SOURCE, file)
    first, second = _compiled_twice(tmp_path / "code.marshal", SOURCE, file)
    assert first.compiled == 1 and second.compiled == 0  # the second start compiled nothing
    with code_cache(tmp_path / "code.marshal") as cache:
        assert cache is not None
        kept = compile_template(SOURCE, file)
        assert template_calls(SOURCE, file) == calls == (("recall", 3),)
        assert cache.compiled == 0
    assert kept.needs == fresh.needs
    variables = {"name": "Ada", "tools": ["a", "b"], "call": lambda *a: "called",
                 "missing": {"field": "f"}}
    assert kept.render(variables) == fresh.render(variables)
    # a render error still names the template's own line
    with pytest.raises(TemplateError) as kept_err:
        kept.render({**variables, "missing": {}})
    with pytest.raises(TemplateError) as fresh_err:
        fresh.render({**variables, "missing": {}})
    assert kept_err.value.line == fresh_err.value.line == 4


def test_another_source_or_file_is_compiled_anew(tmp_path: Path) -> None:
    path = tmp_path / "code.marshal"
    _compiled_twice(path, SOURCE, "a.md")
    for source, file in ((SOURCE + "more\n", "a.md"), (SOURCE, "b.md")):
        with code_cache(path) as cache:
            assert cache is not None
            compile_template(source, file)
            assert cache.compiled == 1


def test_a_refused_template_is_refused_every_time(tmp_path: Path) -> None:
    path = tmp_path / "code.marshal"
    for _ in range(2):
        with code_cache(path) as cache, pytest.raises(TemplateError, match="sandbox"):
            compile_template("{{ tools.__class__ }}", "bad.md")
        assert cache is not None and not any(k.startswith("jinja:") for k in cache.used)


def test_a_template_with_an_include_is_never_kept(tmp_path: Path) -> None:
    (tmp_path / "part.md").write_text("Part {{ x }}.\n")
    file = str(tmp_path / "persona.md")
    with code_cache(tmp_path / "code.marshal") as cache:
        t = compile_template("Hi. {% include 'part.md' %}", file)
        assert cache is not None and not any(k.startswith("jinja:") for k in cache.used)
    assert t.render({"x": 1}) == "Hi. Part 1.\n"
