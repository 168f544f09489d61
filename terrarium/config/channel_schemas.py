"""A team's channel message schemas: written inline, named by a Python model
(``module:Class``), or a ``channels/NAME.yaml`` file found in the team's folder or a
package, compiled once each."""

from __future__ import annotations

from pathlib import Path

from pydantic import ValidationError

from terrarium.config.located import did_you_mean, from_validation_error
from terrarium.config.models import ChannelDecl, ChannelSchemaFile
from terrarium.config.packages import PackageIndex
from terrarium.config.schema_lang import (
    MessageType,
    compile_message_type,
    import_model,
    message_type_from_model,
)
from terrarium.config.yamlio import YamlDoc, load_yaml
from terrarium.errors import ConfigError


class SchemaIndex:
    """Finds and compiles channel message schemas by name, once each."""

    def __init__(self, dirs: list[Path]) -> None:
        self.dirs = list(dict.fromkeys(dirs))
        self._cache: dict[str, MessageType | None] = {}
        self.failed: set[str] = set()  # found but broken: already reported, not "unknown"

    def names(self) -> list[str]:
        found = {p.stem for d in self.dirs if d.is_dir() for p in d.glob("*.yaml")}
        return sorted(found)

    def lookup(self, name: str, errors: list[ConfigError]) -> MessageType | None:
        if name in self._cache:
            return self._cache[name]
        result: MessageType | None = None
        for d in self.dirs:
            path = d / f"{name}.yaml"
            if path.is_file():
                result = load_schema_file(path, errors)
                if result is None:
                    self.failed.add(name)
                break
        self._cache[name] = result
        return result


def load_schema_file(path: Path, errors: list[ConfigError]) -> MessageType | None:
    try:
        doc = load_yaml(path)
    except ConfigError as exc:
        errors.append(exc)
        return None
    try:
        parsed = ChannelSchemaFile.model_validate(doc.data)
    except ValidationError as exc:
        errors.extend(from_validation_error(doc, exc, ChannelSchemaFile, doc.data))
        return None
    return compile_message_type(doc, doc.data, (), parsed.name or path.stem, errors)


def resolve_schema(
    decl: ChannelDecl, cname: str, doc: YamlDoc, schemas: SchemaIndex, errors: list[ConfigError]
) -> MessageType | None:
    ref = decl.message_schema
    kp = ("terrarium", "channels", cname, "schema")
    if ref is None:
        return None
    if isinstance(ref, dict):
        n = len(errors)
        mt = compile_message_type(doc, ref, kp, f"{cname}_message", errors)
        return mt if len(errors) == n else None
    if "." in ref or ":" in ref:
        try:
            return message_type_from_model(ref, import_model(ref))
        except ValueError as exc:
            errors.append(doc.error(kp, f"cannot use schema {ref!r}: {exc}"))
            return None
    n = len(errors)
    mt = schemas.lookup(ref, errors)
    if mt is None and len(errors) == n and ref not in schemas.failed:
        known = schemas.names()
        errors.append(doc.error(kp, f"unknown channel schema {ref!r}",
                                did_you_mean(ref, known)
                                or f"known schemas: {', '.join(known) or 'none'}; add "
                                f"channels/{ref}.yaml"))
    return mt


def schema_dirs(folder: Path, index: PackageIndex) -> list[Path]:
    dirs = [folder / "channels"]
    owner = index.owning(folder)
    if owner:
        dirs.extend(owner.channel_dirs())
    for pkg in index.packages.values():
        dirs.extend(pkg.channel_dirs())
    return dirs


__all__ = ["SchemaIndex", "load_schema_file", "resolve_schema", "schema_dirs"]
