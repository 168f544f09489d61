"""Strict, sandboxed persona templates.

A persona is user-written Jinja2. It runs in a sandbox (no attribute walks to ``__class__``
and friends), with strict undefined (a typo is an error, not an empty string), and it is
checked statically at load so mistakes surface before the first turn, never mid-run.
Compiling is a pure function of the source, so a ``PromptCache`` memoizes it: a creature
restart does not recompile.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from jinja2 import StrictUndefined, Template, TemplateSyntaxError, meta, nodes
from jinja2.exceptions import SecurityError, UndefinedError
from jinja2.sandbox import SandboxedEnvironment

from terrarium.errors import Location, TemplateError
from terrarium.prompt.inputs import (
    ChannelView,
    FieldView,
    NamedOutputView,
    Skill,
    TeamMember,
    ToolView,
)

__all__ = ["CompiledTemplate", "compile_template"]

# Plain frozen data views the aggregator hands to templates; their public attributes are data,
# so the sandbox's per-access safety analysis can be skipped for them (a hot path).
_DATA_VIEW_TYPES = frozenset({ToolView, ChannelView, FieldView, Skill, TeamMember, NamedOutputView})


class _Sandbox(SandboxedEnvironment):
    def getattr(self, obj: Any, attribute: str) -> Any:
        if type(obj) in _DATA_VIEW_TYPES and not attribute.startswith("_"):
            try:
                return getattr(obj, attribute)
            except AttributeError:
                pass
        return super().getattr(obj, attribute)


_ENV = _Sandbox(
    undefined=StrictUndefined,
    autoescape=False,
    keep_trailing_newline=True,
    auto_reload=False,
    cache_size=0,
)
# No implicit globals: a template sees exactly the registered variables (plus ``range``).
_ENV.globals.clear()
_ENV.globals["range"] = range
_ALLOWED_GLOBALS = frozenset(_ENV.globals)
_UNSAFE_FILTERS = frozenset({"attr"})


@dataclass(frozen=True, slots=True)
class CompiledTemplate:
    """A checked template: the compiled code and the free variables it needs (name → line)."""

    file: str
    template: Template
    needs: tuple[tuple[str, int], ...]

    def check_variables(self, registered: Iterable[str]) -> None:
        """Fail before the first turn if the template uses a variable nobody registered."""
        known = set(registered) | _ALLOWED_GLOBALS
        for name, line in self.needs:
            if name not in known:
                listing = ", ".join(sorted(set(registered))) or "(none)"
                raise TemplateError(
                    f"The template uses the variable {name!r}, which is not registered; "
                    f"registered variables are: {listing}.",
                    location=Location(file=Path(self.file), line=line),
                    suggestion="fix the spelling or register the variable with its owner",
                )

    def render(self, variables: Mapping[str, Any]) -> str:
        """Render once; runtime failures (undefined attribute, unsafe access) become errors."""
        try:
            return self.template.render(variables)
        except SecurityError as exc:
            raise TemplateError(
                f"The template tried an unsafe operation and was refused: {exc}",
                location=Location(file=Path(self.file), line=_template_line(exc, self.file)),
            ) from None
        except UndefinedError as exc:
            raise TemplateError(
                f"The template refers to something undefined: {exc}.",
                location=Location(file=Path(self.file), line=_template_line(exc, self.file)),
            ) from None


def _template_line(exc: BaseException, file: str) -> int:
    """The template line a render error came from (Jinja rewrites tracebacks to point there)."""
    tb = exc.__traceback__
    line = 0
    while tb is not None:
        if tb.tb_frame.f_code.co_filename == file:
            line = tb.tb_lineno
        tb = tb.tb_next
    return line


def _refuse(file: str, line: int, what: str) -> TemplateError:
    return TemplateError(
        f"The template tries to reach {what}, which the sandbox refuses.",
        location=Location(file=Path(file), line=line),
        suggestion="templates may only read registered variables and their public fields",
    )


def _check_unsafe(tree: nodes.Template, file: str) -> None:
    """Refuse private/dunder attribute access at load, before anything runs."""
    for node in tree.find_all((nodes.Getattr, nodes.Getitem, nodes.Filter, nodes.Name)):
        if isinstance(node, nodes.Getattr) and node.attr.startswith("_"):
            raise _refuse(file, node.lineno, f"the private attribute {node.attr!r}")
        if isinstance(node, nodes.Getitem):
            arg = node.arg
            if isinstance(arg, nodes.Const) and isinstance(arg.value, str):
                if arg.value.startswith("_"):
                    raise _refuse(file, node.lineno, f"the private item {arg.value!r}")
        if isinstance(node, nodes.Filter) and node.name in _UNSAFE_FILTERS:
            raise _refuse(file, node.lineno, f"the {node.name!r} filter")
        if isinstance(node, nodes.Name) and node.name.startswith("_"):
            raise _refuse(file, node.lineno, f"the private name {node.name!r}")


def _first_lines(tree: nodes.Template, names: set[str]) -> dict[str, int]:
    lines: dict[str, int] = {}
    for node in tree.find_all(nodes.Name):
        if node.name in names and node.ctx == "load":
            lines[node.name] = min(lines.get(node.name, node.lineno), node.lineno)
    return lines


def compile_template(source: str, file: str = "<persona>") -> CompiledTemplate:
    """Parse, check and compile ``source``; syntax errors name the file and the line."""
    try:
        tree = _ENV.parse(source, name=file, filename=file)
    except TemplateSyntaxError as exc:
        raise TemplateError(
            f"The template has a syntax error: {exc.message}.",
            location=Location(file=Path(file), line=exc.lineno),
        ) from None
    _check_unsafe(tree, file)
    free = meta.find_undeclared_variables(tree)
    lines = _first_lines(tree, set(free))
    needs = tuple(sorted(((n, lines.get(n, 0)) for n in free), key=lambda p: (p[1], p[0])))
    # Compile with the file name so render-time tracebacks point at the template's lines.
    code = _ENV.compile(tree, name=file, filename=file)
    template = _ENV.template_class.from_code(_ENV, code, _ENV.make_globals(None))
    return CompiledTemplate(file=file, template=template, needs=needs)


MESSAGE_TEMPLATE_EXTRAS = ("channel", "sender")
"""Variables a message template may use besides the message's own fields."""


def compile_message_template(source: str, channel: str) -> CompiledTemplate:
    """A checked, sandboxed template for one channel's messages (see ``message_templates``).

    It lives here, not beside the controller that renders with it, so that config can try a
    template at load with the very compiler the controller uses, without importing upward.
    """
    return compile_template(source, f"<message template for {channel}>")
