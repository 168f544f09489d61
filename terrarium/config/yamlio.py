"""YAML loading that remembers where every key and value came from.

pyyaml's composer gives node marks; we build plain Python data from the node tree and keep
a map from key path to (line, column), so any later error can point at the exact spot.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from terrarium import secrecy
from terrarium.errors import ConfigError, Location

KeyPath = tuple[str | int, ...]

_SCALAR_LOADER = yaml.SafeLoader("")

# ``${VAR}`` or ``${VAR:default}`` in a string value (KohakuTerrarium's form); ``$${`` is a
# literal ``${``. Substituted as the file is read, so every later check sees the real value.
# Any other ``${`` (one never closed, ``${}``, ``${1X}``) is an error: kept as text, it
# went on silently as part of a URL or a name.
_ENV_REF = re.compile(r"\$\$\{|\$\{([A-Za-z_][A-Za-z0-9_]*)(?::([^}]*))?\}|\$\{")
_REF_FIX = ("write ${NAME} or ${NAME:default} (NAME: letters, digits and _, not starting "
            "with a digit), or $${ for a literal ${")


def env_refs(text: str) -> list[tuple[str, str | None]]:
    """The ``(NAME, default)`` of each ``${...}`` reference in ``text`` as written."""
    return [(m.group(1), m.group(2)) for m in _ENV_REF.finditer(text) if m.group(1)]


def substitute_env(text: str, location: Location) -> str:
    """``text`` with its ``${VAR}``/``${VAR:default}`` references replaced from the
    environment; an unset variable without a default, or a ``${`` that is no reference,
    is an error at ``location``."""

    def one(m: re.Match[str]) -> str:
        if m.group(0) == "$${":
            return "${"
        if m.group(0) == "${":  # no reference: never closed, or no name in it
            rest = text[m.start():]
            end = rest.find("}")
            what = (f"`{rest[:end + 1]}` is not a reference to an environment variable"
                    if end >= 0 else f"`{_short(rest)}` is never closed (no `}}` after `${{`)")
            raise ConfigError(f"{what}, in {_short(text)!r}", location=location,
                              suggestion=_REF_FIX)
        name, default = m.group(1), m.group(2)
        value = secrecy.env(name)
        if value is not None:
            return value
        if default is not None:
            return default
        raise ConfigError(
            f"environment variable {name} is not set (used as ${{{name}}})",
            location=location,
            suggestion=f"export {name}=..., or give a default: ${{{name}:value}}",
        )

    return _ENV_REF.sub(one, text) if "${" in text else text


def _short(text: str, limit: int = 60) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def env_note(written: str) -> str:
    """Where a value written as ``written`` (with ``${...}``) came from, for an error
    about it: which variable was read, or which default was used (never a value read)."""
    parts = []
    for name, default in env_refs(written):
        if secrecy.env(name) is not None:
            parts.append(f"{name} from the environment")
        elif default is not None:
            parts.append(f"{name} is not set, so its default {default!r} was used")
    return f" (written `{written}`: {'; '.join(parts)})" if parts else f" (written `{written}`)"


def env_fix(written: str) -> str:
    """The fix for a bad value that came from ``${...}``: the variable or the default."""
    names = [n for n, _ in env_refs(written)]
    unset = [n for n, d in env_refs(written) if secrecy.env(n) is None and d is not None]
    if unset:
        return (f"set {unset[0]} to a valid value (export {unset[0]}=...), or change the "
                f"default after the colon in ${{{unset[0]}:...}}")
    return f"set {', '.join(names)} to a valid value, or write the value here in place"


@dataclass(slots=True)
class YamlDoc:
    """Parsed YAML plus the position of every node, keyed by its path."""

    path: Path
    data: Any
    marks: dict[KeyPath, tuple[int, int]] = field(default_factory=dict)
    # the text of each unquoted scalar YAML resolved to a boolean or a number, as written:
    # `yes` is true and `1.10` is 1.1 in YAML 1.1, which surprises where text was meant
    scalars: dict[KeyPath, str] = field(default_factory=dict)
    values: int = 0  # built so far, aliases counted each time they are expanded
    # the text of each value written with ``${...}``, as written: an error about the value
    # names the variable (or the default) it came from, not only the value read
    env: dict[KeyPath, str] = field(default_factory=dict)

    def yaml11_note(self, key_path: Sequence[str | int], value: Any) -> str | None:
        """Why ``value`` at ``key_path`` is not the text written there, with the fix
        (quoting); None when it was not an unquoted boolean or number."""
        text = self.scalars.get(tuple(key_path))
        if text is None or isinstance(value, str) or value is None:
            return None
        if isinstance(value, bool):
            read = f"the boolean {str(value).lower()}"
        elif isinstance(value, int | float) and text != str(value):
            read = f"the number {value}"
        elif isinstance(value, int | float):
            read = "a number"
        else:
            return None
        return f"YAML reads unquoted `{text}` as {read}; write \"{text}\" (quoted) to mean " \
            "the text"

    def location(self, key_path: Sequence[str | int]) -> Location:
        """Location of the deepest existing prefix of ``key_path`` (never fails)."""
        kp = tuple(key_path)
        probe = kp
        while probe and probe not in self.marks:
            probe = probe[:-1]
        line, col = self.marks.get(probe, (1, 1))
        return Location(file=self.path, line=line, column=col, key_path=kp)

    def error(
        self, key_path: Sequence[str | int], message: str, suggestion: str | None = None
    ) -> ConfigError:
        if (written := self.env.get(tuple(key_path))) is not None:
            message += env_note(written)
            fix = env_fix(written)
            suggestion = f"{fix}; {suggestion}" if suggestion else fix
        return ConfigError(message, location=self.location(key_path), suggestion=suggestion)


def _mark(node: yaml.Node) -> tuple[int, int]:
    return node.start_mark.line + 1, node.start_mark.column + 1


MAX_DEPTH = 64  # nesting deeper than any config needs: an error, not a RecursionError
MAX_VALUES = 200_000  # values (aliases expanded) past any config's: an error, not a hang
_MERGE_TAG = "tag:yaml.org,2002:merge"


def _merged(node: yaml.Node, kp: KeyPath, doc: YamlDoc) -> dict[Any, Any]:
    """The mapping(s) a ``<<: *anchor`` (or ``<<: [*a, *b]``) brings in; earlier ones win."""
    sources = node.value if isinstance(node, yaml.SequenceNode) else [node]
    out: dict[Any, Any] = {}
    for src in sources:
        value = _build(src, kp, doc)
        if not isinstance(value, dict):
            raise ConfigError("`<<` merges a mapping (an anchored `&name` mapping), not "
                              f"a {type(value).__name__}",
                              location=Location(doc.path, *_mark(src), key_path=kp))
        for k, v in value.items():
            out.setdefault(k, v)
    return out


def _too_many(node: yaml.Node, kp: KeyPath, doc: YamlDoc) -> ConfigError:
    """The error for a document that expands past ``MAX_VALUES``, at the key written where
    the expansion is (an alias's items carry the positions of its anchor, elsewhere)."""
    named = max((i for i in range(1, len(kp) + 1) if isinstance(kp[i - 1], str)
                 and kp[:i] in doc.marks), default=0)
    line, col = doc.marks[kp[:named]] if named else _mark(node)
    return ConfigError(f"the YAML expands to more than {MAX_VALUES:,} values (anchors "
                       "repeated inside anchors)",
                       location=Location(doc.path, line, col, key_path=kp[:named]),
                       suggestion="a configuration never needs this; check the `*` aliases")


def _build(node: yaml.Node, kp: KeyPath, doc: YamlDoc) -> Any:
    doc.values += 1
    if doc.values > MAX_VALUES:  # aliases of aliases: a few lines that expand past memory
        raise _too_many(node, kp, doc)
    if len(kp) > MAX_DEPTH:
        raise ConfigError(f"the YAML is nested more than {MAX_DEPTH} levels deep",
                          location=Location(doc.path, *_mark(node), key_path=kp[:8]),
                          suggestion="a configuration never needs this; check the file")
    doc.marks.setdefault(kp, _mark(node))
    if isinstance(node, yaml.MappingNode):
        out: dict[Any, Any] = {}
        merged: dict[Any, Any] = {}
        for key_node, value_node in node.value:
            if key_node.tag == _MERGE_TAG:
                merged.update({k: v for k, v in _merged(value_node, kp, doc).items()
                               if k not in merged})
                continue
            if not isinstance(key_node, yaml.ScalarNode):
                raise ConfigError(
                    "a mapping key must be a plain scalar, not a list or mapping",
                    location=Location(doc.path, *_mark(key_node), key_path=kp),
                )
            key = _SCALAR_LOADER.construct_object(key_node)
            if key in out:
                first = doc.marks.get((*kp, key), (0, 0))[0]
                raise ConfigError(
                    f"key {key!r} appears twice in the same mapping (first on line {first})",
                    location=Location(doc.path, *_mark(key_node), key_path=(*kp, key)),
                    suggestion="remove or merge one of the two entries",
                )
            # the key's own line is the most useful place to point at
            doc.marks[(*kp, key)] = _mark(key_node)
            out[key] = _build(value_node, (*kp, key), doc)
        for k, v in merged.items():  # keys written here win over merged ones
            out.setdefault(k, v)
        return out
    if isinstance(node, yaml.SequenceNode):
        return [_build(item, (*kp, i), doc) for i, item in enumerate(node.value)]
    value = _SCALAR_LOADER.construct_object(node)
    if not node.style and isinstance(value, bool | int | float):  # plain
        doc.scalars[kp] = node.value
    if isinstance(value, str) and "${" in value:
        doc.env[kp] = value
        value = substitute_env(value, Location(doc.path, *_mark(node), key_path=kp))
        if value and not node.style and node.tag == "tag:yaml.org,2002:str":
            # an unquoted ``${N:4}`` means the number 4, as if it had been written there
            value = _SCALAR_LOADER.construct_object(
                yaml.ScalarNode(yaml.resolver.Resolver().resolve(yaml.ScalarNode, value,
                                                                 (True, False)), value))
    return value


def _syntax_hint(text: str, line: int, problem: str) -> str:
    """What to fix: a tab in the indentation gets its own plain answer."""
    lines = text.splitlines()
    near = lines[max(0, line - 2): line] if line else []
    indent = [ln[: len(ln) - len(ln.lstrip())] for ln in near]
    if "\t" in problem or "tab" in problem.lower() or any("\t" in i for i in indent):
        return "tabs are not allowed in YAML indentation; indent with spaces"
    return "check indentation, colons and quotes around this line"


_LIBYAML = getattr(yaml, "CSafeLoader", None)
"""PyYAML's libyaml parser, when it was built with it: the same nodes ~20x faster than
the pure-Python one (the voice team's eight files: 28 -> 1.5 ms of CPU on a busy machine),
part of every start. A plain scalar's style is ``''`` there and ``None`` in the other."""


def _compose(text: str) -> yaml.Node | None:
    """The document's node tree; a document libyaml refuses is read again by the pure-Python
    parser, whose errors (problem, context, line and column) are the ones we report."""
    if _LIBYAML is not None:
        try:
            return yaml.compose(text, Loader=_LIBYAML)
        except yaml.YAMLError:
            pass
    return yaml.compose(text, Loader=yaml.SafeLoader)


def parse_yaml(text: str, path: Path) -> YamlDoc:
    """Parse one YAML document; syntax errors become a ConfigError with line and column."""
    doc = YamlDoc(path=path, data=None)
    try:
        node = _compose(text)
    except RecursionError:
        raise ConfigError(f"the YAML is nested too deeply to read (over {MAX_DEPTH} levels)",
                          location=Location(path, 1, 1),
                          suggestion="a configuration never needs this; check the file"
                          ) from None
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        if exc.context_mark is not None and (exc.context or "").startswith(
                "while scanning a quoted"):  # the quote that never closes: where it opens
            mark = exc.context_mark
        line, col = (mark.line + 1, mark.column + 1) if mark else (0, 0)
        problem = exc.problem or "invalid YAML"
        ctx = f" ({exc.context})" if exc.context else ""
        raise ConfigError(
            f"YAML syntax error: {problem}{ctx}",
            location=Location(path, line, col),
            suggestion=_syntax_hint(text, line, problem),
        ) from None
    except yaml.reader.ReaderError as exc:  # a control character: where, and which
        before = text[:exc.position]
        line, col = before.count("\n") + 1, exc.position - (before.rfind("\n") + 1) + 1
        raise ConfigError(f"YAML does not allow the control character U+{exc.character:04X} "
                          "here", location=Location(path, line, col),
                          suggestion="remove it (is this a binary file named like a "
                          "configuration?)") from None
    except yaml.YAMLError as exc:
        raise ConfigError(f"YAML error: {exc}", location=Location(path)) from None
    if node is None:
        raise ConfigError(
            "the file is empty", location=Location(path, 1, 1),
            suggestion="a configuration file must be a YAML mapping of keys to values",
        )
    try:
        doc.data = _build(node, (), doc)
    except yaml.YAMLError as exc:  # e.g. a malformed timestamp scalar
        raise ConfigError(f"YAML error: {exc}", location=Location(path, *_mark(node))) from None
    return doc


def utf8_problem(path: Path) -> ConfigError | None:
    """A file that is not UTF-8 (say Windows-1252 from an editor) is an error at the line of
    its first bad byte, before anything reads it as text."""
    try:
        data = path.read_bytes()
    except OSError:
        return None  # a missing file is reported by its own check
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        col = exc.start - (data.rfind(b"\n", 0, exc.start) + 1) + 1
        return ConfigError(
            f"the file is not UTF-8 text: byte 0x{data[exc.start]:02x} cannot be decoded",
            location=Location(file=path, line=line, column=col),
            suggestion="save the file as UTF-8 (e.g. `iconv -f cp1252 -t utf-8`)")
    return None


def load_yaml(path: Path, *, expect_mapping: bool = True) -> YamlDoc:
    """Read and parse ``path``; a missing file, empty file or non-mapping is a ConfigError."""
    try:
        if path.is_dir():
            raise ConfigError(f"{path} is a folder, not a file", location=Location(path))
        if path.exists() and not path.is_file():  # a FIFO's read would wait for ever
            raise ConfigError(f"{path} is not a regular file (a pipe, socket or device)",
                              location=Location(path))
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError(f"file not found: {path}", location=Location(path)) from None
    except UnicodeDecodeError as exc:
        raise (utf8_problem(path) or ConfigError(f"cannot read the file: {exc}",
                                                 location=Location(path))) from None
    except OSError as exc:
        raise ConfigError(f"cannot read the file: {exc}", location=Location(path)) from None
    doc = parse_yaml(text, path)
    if expect_mapping and not isinstance(doc.data, dict):
        kind = type(doc.data).__name__
        raise ConfigError(
            f"the top level must be a mapping of keys to values, not a {kind}",
            location=Location(path, 1, 1),
            suggestion="write `key: value` lines at the top level",
        )
    return doc


__all__ = [
    "MAX_DEPTH",
    "MAX_VALUES",
    "KeyPath",
    "YamlDoc",
    "load_yaml",
    "parse_yaml",
    "substitute_env",
    "utf8_problem",
]
