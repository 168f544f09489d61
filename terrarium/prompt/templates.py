"""Strict, sandboxed persona templates.

A persona is user-written Jinja2. It runs in a sandbox (no attribute walks to ``__class__``
and friends), with strict undefined (a typo is an error, not an empty string), and it is
checked statically at load so mistakes surface before the first turn, never mid-run.
Compiling is a pure function of the source, so a ``PromptCache`` memoizes it: a creature
restart does not recompile.
"""

from __future__ import annotations

import hashlib
import threading
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import CodeType
from typing import Any

from jinja2 import FileSystemLoader, StrictUndefined, Template, TemplateSyntaxError, meta, nodes
from jinja2 import __version__ as jinja2_version
from jinja2.exceptions import SecurityError, UndefinedError
from jinja2.sandbox import SandboxedEnvironment, safe_range

from terrarium import codecache
from terrarium.errors import Location, TemplateError
from terrarium.prompt.inputs import (
    ChannelView,
    FieldView,
    NamedOutputView,
    Skill,
    TeamMember,
    ToolView,
)

__all__ = ["CompiledTemplate", "compile_template", "prompt_dirs", "template_calls"]

# Plain frozen data views the aggregator hands to templates; their public attributes are data,
# so the sandbox's per-access safety analysis can be skipped for them (a hot path).
_DATA_VIEW_TYPES = frozenset({ToolView, ChannelView, FieldView, Skill, TeamMember, NamedOutputView})


# Bounds on what one render may cost: a template is user input, and rendering runs on the
# event loop. Loops keep the sandbox's own capped ``range`` (100 000 items).
MAX_OUTPUT_CHARS = 1_000_000
MAX_PRODUCT_ITEMS = 100_000  # a string or list made by ``*``
RENDER_SECONDS = 2.0
_render = threading.local()


def _check_deadline() -> None:
    deadline = getattr(_render, "deadline", None)
    if deadline is not None and time.monotonic() > deadline:
        raise SecurityError(f"rendering took longer than {RENDER_SECONDS:g} s")


def _sized(value: Any) -> int | None:
    return len(value) if isinstance(value, (str, list, tuple, bytes)) else None


class _Sandbox(SandboxedEnvironment):
    intercepted_binops = frozenset({"*", "**"})

    def getattr(self, obj: Any, attribute: str) -> Any:
        if type(obj) in _DATA_VIEW_TYPES and not attribute.startswith("_"):
            try:
                return getattr(obj, attribute)
            except AttributeError:
                pass
        _check_deadline()
        return super().getattr(obj, attribute)

    def call(self, context: Any, obj: Any, *args: Any, **kwargs: Any) -> Any:
        _check_deadline()
        return super().call(context, obj, *args, **kwargs)

    def call_binop(self, context: Any, operator: str, left: Any, right: Any) -> Any:
        _check_deadline()
        if operator == "*":
            for seq, n in ((left, right), (right, left)):
                size = _sized(seq)
                if size is not None and isinstance(n, int) and size * n > MAX_PRODUCT_ITEMS:
                    raise SecurityError(
                        f"'*' would make {size * n} items; templates may make at most "
                        f"{MAX_PRODUCT_ITEMS}")
        if operator == "**" and isinstance(right, int) and right > 64:
            raise SecurityError("'**' with an exponent over 64 is refused")
        return super().call_binop(context, operator, left, right)


_ENV = _Sandbox(
    undefined=StrictUndefined,
    autoescape=False,
    keep_trailing_newline=True,
    auto_reload=False,
    cache_size=0,
)
# No implicit globals: a template sees exactly the registered variables (plus ``range``).
_ENV.globals.clear()
_ENV.globals["range"] = safe_range  # the sandbox's own, capped: never Python's
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
        """Render once; runtime failures (undefined attribute, unsafe access, a bound
        exceeded: output size, ``*`` products, range, the deadline) become errors."""
        _render.deadline = time.monotonic() + RENDER_SECONDS
        try:
            parts: list[str] = []
            size = 0
            for chunk in self.template.generate(variables):
                size += len(chunk)
                if size > MAX_OUTPUT_CHARS:
                    raise SecurityError(
                        f"the output grew past {MAX_OUTPUT_CHARS} characters")
                _check_deadline()
                parts.append(chunk)
            return "".join(parts)
        except (SecurityError, OverflowError) as exc:
            raise TemplateError(
                f"The template tried an unsafe operation and was refused: {exc}",
                location=Location(file=Path(self.file), line=_template_line(exc, self.file)),
            ) from None
        except UndefinedError as exc:
            raise TemplateError(
                f"The template refers to something undefined: {exc}.",
                location=Location(file=Path(self.file), line=_template_line(exc, self.file)),
            ) from None
        finally:
            _render.deadline = None


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


PACKAGE_FILE = "kohaku.yaml"
MAX_INCLUDE_DEPTH = 8


def prompt_dirs(file: str) -> tuple[Path, ...]:
    """Where ``{% include %}`` may read fragments from: the persona's own folder (and its
    ``prompts/``), and the ``prompts/`` folder of the package that holds it."""
    here = Path(file).resolve().parent
    if not Path(file).is_absolute() and not Path(file).exists():
        return ()
    dirs = [here, here / "prompts"]
    for up in (here, *here.parents):
        if (up / PACKAGE_FILE).is_file():
            dirs.append(up / "prompts")
            break
    return tuple(dict.fromkeys(d for d in dirs if d.is_dir()))


def _find_fragment(name: str, dirs: Sequence[Path]) -> Path | None:
    if Path(name).is_absolute() or ".." in Path(name).parts or "\\" in name:
        return None
    for d in dirs:
        candidate = (d / name).resolve()
        if candidate.is_file() and any(candidate.is_relative_to(x.resolve()) for x in dirs):
            return candidate
    return None


def _check_includes(tree: nodes.Template, file: str, dirs: Sequence[Path], depth: int,
                    needs: list[tuple[str, int]]) -> None:
    """Each include names a fragment in the allowed folders; each fragment is checked as
    strictly as the template itself (its variables count as the includer's, at that line)."""
    for node in tree.find_all(nodes.Include):
        where = Location(file=Path(file), line=node.lineno)
        target = node.template
        if not (isinstance(target, nodes.Const) and isinstance(target.value, str)):
            raise TemplateError("The template uses {% include %} without a quoted fragment "
                                "name, which prompt templates do not support.", location=where)
        found = _find_fragment(target.value, dirs) if dirs else None
        if found is None:
            listing = ", ".join(str(d) for d in dirs) or "(none: the template has no folder)"
            raise TemplateError(
                f"The template uses {{% include %}} of {target.value!r}, which is not a file "
                f"in its prompt folders: {listing}.",
                location=where,
                suggestion="put shared fragments in the creature's folder or the package's "
                           "prompts/ folder, and name them relative to it")
        if depth >= MAX_INCLUDE_DEPTH:
            raise TemplateError(f"Includes nest more than {MAX_INCLUDE_DEPTH} deep.",
                                location=where, suggestion="does a fragment include itself?")
        try:
            source = found.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            raise TemplateError(f"The included fragment {found} is not UTF-8 text.",
                                location=where, suggestion="save it as UTF-8") from None
        sub = _parse(source, str(found))
        _check_unsafe(sub, str(found), dirs, depth + 1, needs)
        needs.extend((n, node.lineno) for n in meta.find_undeclared_variables(sub))


def _check_unsafe(tree: nodes.Template, file: str, dirs: Sequence[Path] = (), depth: int = 0,
                  needs: list[tuple[str, int]] | None = None) -> None:
    """Refuse private/dunder attribute access, and templates loading other templates (but
    an include of a fragment from the prompt folders), at load, before anything runs."""
    for tag, kinds in (("import", (nodes.Import, nodes.FromImport)), ("extends", nodes.Extends)):
        for node in tree.find_all(kinds):
            raise TemplateError(
                f"The template uses {{% {tag} %}}, which prompt templates do not support.",
                location=Location(file=Path(file), line=node.lineno),
                suggestion="put the text in the template itself, or {% include %} a fragment",
            )
    _check_includes(tree, file, dirs, depth, needs if needs is not None else [])
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


def _parse(source: str, file: str) -> nodes.Template:
    try:
        return _ENV.parse(source, name=file, filename=file)
    except TemplateSyntaxError as exc:
        raise TemplateError(
            f"The template has a syntax error: {exc.message}.",
            location=Location(file=Path(exc.filename or file), line=exc.lineno),
        ) from None


def compile_template(source: str, file: str = "<persona>",
                     joined: tuple[Path, ...] = ()) -> CompiledTemplate:
    """Parse, check and compile ``source``; syntax errors name the file and the line.
    ``{% include "x.md" %}`` reads fragments from :func:`prompt_dirs` of ``file`` and of
    the ``joined`` files (the others of a persona joined along base_config) only.
    A template without includes that a previous start compiled comes from its code cache
    (``terrarium/codecache.py``): all of the above is a function of ``source`` and
    ``file`` alone, and only a template that passed every check is kept."""
    kept = _kept(source, file)
    if kept is not None:
        code, needs = kept[0], kept[1]
        template = _ENV.template_class.from_code(_ENV, code, _ENV.make_globals(None))
        return CompiledTemplate(file=file, template=template, needs=needs)
    tree = _parse(source, file)
    dirs = tuple(dict.fromkeys(
        [*prompt_dirs(file), *(d for f in joined for d in prompt_dirs(str(f)))]))
    included: list[tuple[str, int]] = []
    _check_unsafe(tree, file, dirs, 0, included)
    free = meta.find_undeclared_variables(tree)
    lines = _first_lines(tree, set(free))
    pairs = {(n, lines.get(n, 0)) for n in free} | set(included)
    needs = tuple(sorted(pairs, key=lambda p: (p[1], p[0])))
    # an include is served by a loader confined to the prompt folders, nothing else
    env = _ENV.overlay(loader=FileSystemLoader([str(d) for d in dirs])) if included or any(
        True for _ in tree.find_all(nodes.Include)) else _ENV
    # Compile with the file name so render-time tracebacks point at the template's lines.
    code = env.compile(tree, name=file, filename=file)
    template = env.template_class.from_code(env, code, env.make_globals(None))
    if env is _ENV and not included:
        _keep(source, file, (code, needs, _calls(tree)))
    return CompiledTemplate(file=file, template=template, needs=needs)


# What a kept template's code depends on besides its source and file name: Jinja's
# version and the sandbox's settings (bump the revision when the checks change).
_KEPT_REVISION = 1
_KEPT_SETTINGS = repr((_KEPT_REVISION, jinja2_version, type(_ENV).__qualname__, *(
    getattr(_ENV, a) for a in (
        "block_start_string", "block_end_string", "variable_start_string",
        "variable_end_string", "comment_start_string", "comment_end_string",
        "line_statement_prefix", "line_comment_prefix", "trim_blocks", "lstrip_blocks",
        "newline_sequence", "keep_trailing_newline", "autoescape", "optimized")),
    sorted(_ENV.intercepted_binops), sorted(_ENV.extensions), sorted(_ALLOWED_GLOBALS)))


def _kept_key(source: str, file: str) -> str:
    digest = hashlib.sha256(repr((_KEPT_SETTINGS, file, source)).encode(
        "utf-8", "surrogatepass")).hexdigest()
    return f"jinja:{digest}"


def _kept(source: str, file: str) -> tuple[Any, tuple[tuple[str, int], ...],
                                           tuple[tuple[str, int], ...]] | None:
    """(code, needs, calls) of ``source`` as a previous start compiled it, or None."""
    cache = codecache.active()
    if cache is None:
        return None
    value = cache.get(_kept_key(source, file))
    if (isinstance(value, tuple) and len(value) == 3 and isinstance(value[0], CodeType)
            and all(isinstance(v, tuple) and all(
                isinstance(p, tuple) and len(p) == 2 and isinstance(p[0], str)
                and isinstance(p[1], int) for p in v) for v in value[1:])):
        return value
    return None


def _keep(source: str, file: str, value: tuple[Any, ...]) -> None:
    cache = codecache.active()
    if cache is not None:
        cache.put(_kept_key(source, file), value)


def _calls(tree: nodes.Template) -> tuple[tuple[str, int], ...]:
    out = []
    for node in tree.find_all(nodes.Call):
        if (isinstance(node.node, nodes.Name) and node.node.name == "call" and node.args
                and isinstance(node.args[0], nodes.Const) and isinstance(node.args[0].value, str)):
            out.append((node.args[0].value, node.lineno))
    return tuple(out)


def template_calls(source: str, file: str = "<persona>") -> tuple[tuple[str, int], ...]:
    """The literal names given to ``call("name", ...)`` in ``source``, each with its line:
    checked against the creature's real calls before anything runs."""
    kept = _kept(source, file)
    if kept is not None:
        return kept[2]
    try:
        tree = _ENV.parse(source, name=file, filename=file)
    except TemplateSyntaxError:
        return ()  # compile_template reports it
    return _calls(tree)


MESSAGE_TEMPLATE_EXTRAS = ("channel", "sender")
"""Variables a message template may use besides the message's own fields."""


def compile_message_template(source: str, channel: str) -> CompiledTemplate:
    """A checked, sandboxed template for one channel's messages (see ``message_templates``).

    It lives here, not beside the controller that renders with it, so that config can try a
    template at load with the very compiler the controller uses, without importing upward.
    """
    return compile_template(source, f"<message template for {channel}>")
