"""Bounded templates: the sandbox's capped range, capped ``*`` products and output, a
render deadline, and templates that load other templates refused at load with file:line."""

from __future__ import annotations

import time

import pytest

from terrarium.errors import TemplateError
from terrarium.prompt.templates import compile_template


@pytest.mark.parametrize(("source", "says"), [
    ("{% for x in range(10**9) %}{{ x }}{% endfor %}", "Range too big"),
    ("{{ 'a' * 10**8 }}", "'*' would make 100000000 items"),
    ("{{ [1, 2] * 1000000 }}", "'*' would make 2000000 items"),
    ("{{ 2 ** 100000 }}", "exponent over 64"),
    ("{% for a in range(99999) %}{{ 'x' * 99 }}{% endfor %}", "output grew past"),
    ("{% for a in range(100000) %}{% for b in range(100000) %}{% endfor %}{% endfor %}",
     "longer than 2 s"),
])
def test_template_bombs_end_in_an_error_quickly(source: str, says: str) -> None:
    started = time.monotonic()
    with pytest.raises(TemplateError, match="refused") as err:
        compile_template(source, "persona.md").render({})
    assert says in err.value.message
    assert str(err.value.file) == "persona.md"
    assert time.monotonic() - started < 4


def test_small_products_and_ranges_still_work() -> None:
    out = compile_template("{{ 'ab' * 3 }} {% for i in range(3) %}{{ i }}{% endfor %}",
                           "p.md").render({})
    assert out == "ababab 012"


@pytest.mark.parametrize(("source", "tag"), [
    ("one\n{% include 'other.md' %}", "include"),
    ("one\n{% import 'macros.md' as m %}", "import"),
    ("one\n{% from 'macros.md' import x %}", "import"),
    ("{% extends 'base.md' %}\n", "extends"),
])
def test_templates_loading_templates_are_refused_at_load_with_file_and_line(
        source: str, tag: str) -> None:
    with pytest.raises(TemplateError, match=f"uses {{% {tag} %}}") as err:
        compile_template(source, "persona.md")
    assert err.value.line == source.count("\n", 0, source.index("{%")) + 1
