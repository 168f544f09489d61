"""Loading a whole team and checking every cross reference before anything starts."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, TypeAdapter, ValidationError

from terrarium.config.creature import (
    LoadedCreature,
    config_file,
    load_creature,
    load_inline_creature,
)
from terrarium.config.kohaku_compat import (
    CREATURE_UNSUPPORTED,
    ENTRY_UNSUPPORTED,
    TERRARIUM_UNSUPPORTED,
    kt_channel_kinds,
    not_supported,
)
from terrarium.config.located import did_you_mean, from_validation_error
from terrarium.config.models import (
    ChannelDecl,
    ChannelSchemaFile,
    CreatureConfig,
    CreatureEntry,
    OutputWiring,
    RootSpec,
    TerrariumFile,
)
from terrarium.config.packages import MANIFEST, PackageIndex, build_index
from terrarium.config.schema_lang import (
    MessageType,
    compile_message_type,
    import_model,
    message_type_from_model,
)
from terrarium.config.yamlio import YamlDoc, load_yaml
from terrarium.errors import (
    ConfigError,
    ConfigErrors,
    Location,
    TerrariumError,
    closest_name,
)
from terrarium.prompt.examples import value_for_label
from terrarium.prompt.templates import MESSAGE_TEMPLATE_EXTRAS, compile_message_template
from terrarium.voice.speech_config import TranscriptionSettings

TERRARIUM_FILE = "terrarium.yaml"


@dataclass(slots=True)
class ChannelDef:
    name: str
    type: Literal["queue", "broadcast"]
    description: str
    capacity: int
    message_type: MessageType | None
    listeners: tuple[str, ...] = ()
    senders: tuple[str, ...] = ()
    max_bytes: int = 65536


@dataclass(slots=True)
class CreatureDef:
    """A creature as placed in a team: its merged config and its wiring."""

    name: str
    loaded: LoadedCreature
    listen: tuple[str, ...] = ()
    can_send: tuple[str, ...] = ()
    output_wiring: tuple[str, ...] = ()
    hint_overrides: dict[str, str] = field(default_factory=dict)
    inline: bool = False  # written inside terrarium.yaml (base_config + overrides)

    @property
    def config(self) -> Any:
        return self.loaded.config

    @property
    def folder(self) -> Path:
        return self.loaded.folder


@dataclass(slots=True)
class Team:
    """A validated team: nothing is started until one of these exists."""

    name: str
    path: Path
    creatures: dict[str, CreatureDef]
    channels: dict[str, ChannelDef]
    input_channel: str | None = None
    root: CreatureDef | None = None
    index: PackageIndex | None = None
    transport: Literal["memory", "nats"] = "memory"
    transcription: TranscriptionSettings | None = None  # speech in (voice/listen.py)
    # the team's shared workspace: "shared" (in the run folder), an absolute folder, or None
    workspace: str | None = None

    @property
    def folder(self) -> Path:
        return self.path.parent if self.path.is_file() else self.path

    @property
    def everyone(self) -> dict[str, CreatureDef]:
        """Every creature the run may host by the name the runtime uses: the team's, then
        the root creature as ``root``."""
        return {**self.creatures, **({"root": self.root} if self.root is not None else {})}

    @property
    def entry(self) -> str | None:
        """The creature that hears the user: the input channel's first listener."""
        if self.input_channel:
            listeners = self.channels[self.input_channel].listeners
            return listeners[0] if listeners else None
        return next(iter(self.creatures), None)


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


def _resolve_schema(
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


def _schema_dirs(folder: Path, index: PackageIndex) -> list[Path]:
    dirs = [folder / "channels"]
    owner = index.owning(folder)
    if owner:
        dirs.extend(owner.channel_dirs())
    for pkg in index.packages.values():
        dirs.extend(pkg.channel_dirs())
    return dirs


def _hint_overrides(index: PackageIndex, lc: LoadedCreature) -> dict[str, str]:
    owner = index.owning(lc.path)
    merged = dict(owner.manifest.framework_hints) if owner else {}
    merged.update(lc.config.framework_hint_overrides)
    return merged


def _field_names(mt: MessageType | None) -> list[str]:
    """A channel's message fields; an untyped channel carries just ``text``."""
    return [f.name for f in mt.fields] if mt is not None else ["text"]


_WIRING_WORDS = {  # wiring key → (what the creature cannot do, what it can)
    "can_send": ("cannot send on", "can send on"),
    "listen": ("does not listen to", "listens to"),
}


def _unwired(lc: LoadedCreature, key: str, cname: str, name: str, wired: list[str],
             role: str, channels: dict[str, ChannelDef]) -> ConfigError | None:
    """The error for a per-channel setting (``key``) naming a channel the creature's
    ``role`` wiring does not include; None when it does."""
    if cname in wired:
        return None
    cannot, can = _WIRING_WORDS[role]
    reason = "is not a declared channel" if cname not in channels else \
        f"creature {name!r} {cannot} (not in its channels.{role})"
    return lc.where(key, cname).error(
        f"{key} names channel {cname!r}, which {reason}",
        did_you_mean(cname, wired) or f"{name!r} {can}: {', '.join(wired) or 'nothing'}")


def check_send_fill(lc: LoadedCreature, name: str, can_send: list[str],
                    channels: dict[str, ChannelDef], errors: list[ConfigError]) -> None:
    """Each filled field must belong to a channel this creature sends on and hold text."""
    for cname, fields in lc.config.send_fill.items():
        if (err := _unwired(lc, "send_fill", cname, name, can_send, "can_send", channels)):
            errors.append(err)
            continue
        mt = channels[cname].message_type
        known = _field_names(mt)
        for fname in fields:
            if fname not in known:
                errors.append(lc.where("send_fill", cname, fname).error(
                    f"channel {cname!r} has no field {fname!r}",
                    did_you_mean(fname, known) or f"its fields: {', '.join(known)}"))
            elif mt is not None and not _takes_text(mt.model, fname):
                errors.append(lc.where("send_fill", cname, fname).error(
                    f"field {fname!r} of channel {cname!r} does not hold text, and send_fill "
                    "fills in text", "fill only str fields"))


def check_message_templates(lc: LoadedCreature, name: str, listen: list[str],
                            channels: dict[str, ChannelDef],
                            errors: list[ConfigError]) -> None:
    """Each template must be for a channel this creature listens to and render its fields."""
    for cname, source in lc.config.message_templates.items():
        if (err := _unwired(lc, "message_templates", cname, name, listen, "listen", channels)):
            errors.append(err)
            continue
        mt = channels[cname].message_type
        fields = _field_names(mt)
        try:
            template = compile_message_template(source, cname)
            template.check_variables([*fields, *MESSAGE_TEMPLATE_EXTRAS])
            template.render(_sample_payload(mt))
        except TerrariumError as exc:
            errors.append(lc.where("message_templates", cname).error(
                f"the message template for channel {cname!r} does not work: {exc.message}",
                f"it may use the message's fields: {', '.join(fields)}"))


def _sample_payload(message_type: MessageType | None) -> dict[str, Any]:
    """A payload of placeholder values for every field, to try a template before any run."""
    fields = {f.name: value_for_label(f.type_label) for f in message_type.fields} \
        if message_type is not None else {"text": "..."}
    return {**fields, **{name: name for name in MESSAGE_TEMPLATE_EXTRAS}}


def _takes_text(model: type[BaseModel], fname: str) -> bool:
    try:
        TypeAdapter(model.model_fields[fname].annotation).validate_python("text")
    except ValidationError:
        return False
    return True


_ENTRY_KEYS = frozenset(CreatureEntry.model_fields) | {"config"}
_ROOT_KEYS = frozenset(RootSpec.model_fields)
_CREATURE_KEYS = frozenset(CreatureConfig.model_fields) | frozenset(CREATURE_UNSUPPORTED) | {"llm"}


def _split_inline(entry: Any, keep: frozenset[str]) -> dict[str, Any]:
    """Pop the creature keys written beside ``base_config`` (KohakuTerrarium's inline
    overrides) out of a terrarium entry; what is neither stays for the schema to name."""
    if not isinstance(entry, dict):
        return {}
    inline = {k: entry.pop(k) for k in list(entry) if k not in keep and k in _CREATURE_KEYS}
    inline.pop("name", None)
    return inline


def _pre_normalize(doc: YamlDoc, errors: list[ConfigError]) -> tuple[
        list[dict[str, Any]], dict[str, Any] | None]:
    """KohakuTerrarium's terrarium forms: channel shorthand, inline creature overrides."""
    spec = doc.data.get("terrarium") if isinstance(doc.data, dict) else None
    if not isinstance(spec, dict):
        return [], None
    for key, (feature, instead) in TERRARIUM_UNSUPPORTED.items():
        if key in spec:
            errors.append(ConfigError(not_supported(feature, instead),
                                      location=doc.location(("terrarium", key))))
            spec.pop(key)
    channels = spec.get("channels")
    if isinstance(channels, dict):
        for cname, decl in list(channels.items()):
            if isinstance(decl, str):  # `name: "description"`
                channels[cname] = {"description": decl}
    entries = [e for e in [*(spec.get("creatures") or []), spec.get("root")]
               if isinstance(e, dict)]
    if any("base_config" in e for e in entries):  # KohakuTerrarium's form: its channel kinds
        kt_channel_kinds(spec)
    inlines: list[dict[str, Any]] = []
    for i, entry in enumerate(spec.get("creatures") or []):
        if isinstance(entry, dict):
            for key, (feature, instead) in ENTRY_UNSUPPORTED.items():
                if key in entry:
                    entry.pop(key)
                    errors.append(ConfigError(not_supported(feature, instead),
                                              location=doc.location(
                                                  ("terrarium", "creatures", i, key))))
        inlines.append(_split_inline(entry, _ENTRY_KEYS))
    root = spec.get("root")
    root_inline = _split_inline(root, _ROOT_KEYS) if isinstance(root, dict) else None
    return inlines, root_inline


def _creature_ref(entry: CreatureEntry | RootSpec, doc: YamlDoc, kp: tuple[Any, ...],
                  errors: list[ConfigError]) -> str | None:
    if entry.config and entry.base_config:
        errors.append(doc.error((*kp, "base_config"), "give `config` or `base_config`, not both",
                                "keep `base_config` when you override keys beside it"))
        return None
    ref = entry.config or entry.base_config
    if ref is None:
        errors.append(doc.error(kp, "missing required key 'config'",
                                "add `config:` (or `base_config:` with overrides)"))
    return ref


def _wiring_targets(spec: Any, channels: dict[str, ChannelDecl], doc: YamlDoc,
                    errors: list[ConfigError]) -> dict[str, str]:
    """KohakuTerrarium's ``output_wiring`` to a creature → a queue channel named after it,
    which it listens to (its direct channel). Returns {channel: listening creature}."""
    names = {e.name for e in spec.creatures} | ({"root"} if spec.root else set())
    out: dict[str, str] = {}
    for i, entry in enumerate(spec.creatures):
        for j, w in enumerate(entry.output_wiring):
            kp = ("terrarium", "creatures", i, "output_wiring", j)
            target = w if isinstance(w, str) else w.to
            if isinstance(w, OutputWiring):
                if not w.with_content:
                    errors.append(ConfigError(not_supported(
                        "content-free output_wiring pings (`with_content: false`)",
                        "the monitor (`terrarium run --tui`), which shows every creature's "
                        "state"), location=doc.location(kp)))
                    continue
                if w.prompt is not None:
                    errors.append(ConfigError(not_supported(
                        "output_wiring `prompt` templates",
                        "`message_templates` on the receiving creature"),
                        location=doc.location((*kp, "prompt"))))
            if target not in channels and target in names:
                out[target] = target
    return out


def once(errors: list[ConfigError]) -> list[ConfigError]:
    """Each error once: a base creature shared by several entries, or a package manifest
    read for each of its terrariums, has one mistake, so one error."""
    seen: set[str] = set()
    return [e for e in errors if not (e.render() in seen or seen.add(e.render()))]


def _load_entry(entry: CreatureEntry, doc: YamlDoc, ekp: tuple[Any, ...],
                inline: dict[str, Any], index: PackageIndex, tpath: Path,
                errors: list[ConfigError]) -> LoadedCreature | None:
    """One terrarium entry's creature, or None (the reason is in ``errors``)."""
    ref = _creature_ref(entry, doc, ekp, errors)
    if ref is None:
        return None
    if entry.base_config is not None or inline:
        return load_inline_creature({**inline, "base_config": ref, "name": entry.name}, doc,
                                    ekp, index, errors)
    try:
        cpath = config_file(index.resolve_ref(ref, tpath.parent, doc.location((*ekp, "config"))))
    except ConfigError as exc:
        errors.append(exc)
        return None
    if not cpath.is_file():
        errors.append(doc.error((*ekp, "config"), f"creature config not found: {cpath}",
                                "point `config` at a creature folder holding config.yaml"))
        return None
    return load_creature(cpath, index, errors)


def load_team(path: Path | str) -> Team:
    """Load and validate a terrarium (folder or terrarium.yaml); raise ConfigErrors."""
    path = Path(path).resolve()
    tpath = path / TERRARIUM_FILE if path.is_dir() else path
    errors: list[ConfigError] = []
    index = build_index(tpath.parent)
    errors.extend(index.errors)
    seen = len(index.errors)  # packages read later, when referenced, add theirs at the end
    try:
        doc = load_yaml(tpath)
    except ConfigError as exc:
        raise ConfigErrors([*errors, exc]) from None
    inlines, root_inline = _pre_normalize(doc, errors)
    try:
        spec = TerrariumFile.model_validate(doc.data).terrarium
    except ValidationError as exc:
        raise ConfigErrors(
            [*errors, *from_validation_error(doc, exc, TerrariumFile, doc.data)]
        ) from None

    schemas = SchemaIndex(_schema_dirs(tpath.parent, index))
    channels: dict[str, ChannelDef] = {}
    for cname, decl in spec.channels.items():
        if not cname.isidentifier():
            fixed = cname.replace("-", "_")
            errors.append(doc.error(("terrarium", "channels", cname), not_supported(
                f"channel names with '-' ({cname!r})", f"{fixed!r}")
                if fixed.isidentifier() else f"channel name {cname!r} must be an identifier"))
        mt = _resolve_schema(decl, cname, doc, schemas, errors)
        channels[cname] = ChannelDef(cname, decl.type, decl.description, decl.capacity, mt,
                                     max_bytes=decl.max_bytes)
    direct = _wiring_targets(spec, spec.channels, doc, errors)
    for cname, target in direct.items():
        channels[cname] = ChannelDef(cname, "queue", f"turn-end text delivered to {target}",
                                     64, None)

    creatures: dict[str, CreatureDef] = {}
    listeners: dict[str, list[str]] = {c: [] for c in channels}
    senders: dict[str, list[str]] = {c: [] for c in channels}
    first_seen: dict[str, int] = {}
    for i, entry in enumerate(spec.creatures):
        ekp = ("terrarium", "creatures", i)
        if entry.name in first_seen:
            errors.append(doc.error((*ekp, "name"), f"creature name {entry.name!r} is used twice "
                                    f"(first at creatures[{first_seen[entry.name]}])",
                                    "give each creature a unique name"))
            continue
        first_seen[entry.name] = i
        if not entry.name.isidentifier():
            errors.append(doc.error((*ekp, "name"),
                                    f"creature name {entry.name!r} must be an identifier"))
        # a creature that fails to load is still wired as written: one mistake, one error
        # (no "nobody listens" for the channels it would have heard)
        inline = inlines[i] if i < len(inlines) else {}
        lc = _load_entry(entry, doc, ekp, inline, index, tpath, errors)
        wired = [w if isinstance(w, str) else w.to for w in entry.output_wiring
                 if isinstance(w, str) or (w.with_content and w.prompt is None)]
        listen = [*entry.channels.listen,
                  *(c for c, t in direct.items() if t == entry.name)]
        can_send, heard = list(entry.channels.can_send), list(entry.channels.listen)
        for role, names, table in (("listen", list(listen), listeners),
                                   ("can_send", list(can_send), senders),
                                   ("output_wiring", wired, senders)):
            for j, ch in enumerate(names):
                kp = (*ekp, "channels", role, j) if role != "output_wiring" else (*ekp, role, j)
                if ch not in channels:
                    errors.append(doc.error(kp, f"unknown channel {ch!r} in {role}",
                                            did_you_mean(ch, list(channels))
                                            or f"declare it under terrarium.channels "
                                            f"(declared: {', '.join(channels) or 'none'})"))
                    # one mistake, one error: wire the channel the typo surely meant, so
                    # that no "nobody listens" or unwired-template error follows from it
                    meant = closest_name(ch, list(channels))
                    if meant is not None and entry.name not in table[meant]:
                        table[meant].append(entry.name)
                        if role == "listen":
                            heard.append(meant)
                        elif role == "can_send":
                            can_send.append(meant)
                elif entry.name not in table[ch]:
                    table[ch].append(entry.name)
        for j, ch in enumerate(wired):
            mt = channels[ch].message_type if ch in channels else None
            if mt is not None and "text" not in {f.name for f in mt.fields}:
                errors.append(doc.error((*ekp, "output_wiring", j),
                                        f"channel {ch!r} has schema {mt.name!r} without a `text` "
                                        "field, so turn-end text cannot be delivered on it"))
        if lc is not None:
            check_send_fill(lc, entry.name, can_send, channels, errors)
            check_message_templates(lc, entry.name, heard, channels, errors)
            creatures[entry.name] = CreatureDef(
                entry.name, lc, tuple(listen), tuple(entry.channels.can_send),
                tuple(wired), _hint_overrides(index, lc),
                inline=entry.base_config is not None or bool(inline))

    root: CreatureDef | None = None
    if spec.root is not None:
        rkp = ("terrarium", "root")
        kt_form = spec.root.base_config is not None or bool(root_inline)
        hears = spec.root.listen if spec.root.listen or not kt_form else "*"
        root_listen = list(channels) if hears == "*" else list(hears)
        root_listen += [c for c, t in direct.items() if t == "root" and c not in root_listen]
        for j, ch in enumerate(hears if hears != "*" else ()):
            if ch not in channels:
                errors.append(doc.error((*rkp, "listen", j), f"unknown channel {ch!r} in listen",
                                        did_you_mean(ch, list(channels))))
        ref = _creature_ref(spec.root, doc, rkp, errors)
        try:
            lc = None
            if ref is not None and kt_form:
                lc = load_inline_creature({**(root_inline or {}), "base_config": ref,
                                           "name": "root"}, doc, rkp, index, errors, root=True)
            elif ref is not None:
                rpath = config_file(index.resolve_ref(ref, tpath.parent,
                                                      doc.location((*rkp, "config"))))
                lc = load_creature(rpath, index, errors) if rpath.is_file() else None
                if not rpath.is_file():
                    errors.append(doc.error((*rkp, "config"),
                                            f"root creature config not found: {rpath}"))
            heard = tuple(c for c in root_listen if c in channels)
            if lc is not None:
                root = CreatureDef("root", lc, listen=heard,
                                   hint_overrides=_hint_overrides(index, lc), inline=kt_form)
            for ch in heard:  # wired even when it failed to load: its error is the one
                listeners[ch].append("root")
            if "root" in creatures:
                errors.append(doc.error(rkp, "a creature is already named "
                                        "'root', the name the root creature takes",
                                        "rename that creature"))
        except ConfigError as exc:
            errors.append(exc)
    if spec.input_channel is not None:
        ikp = ("terrarium", "input_channel")
        if spec.input_channel not in channels:
            errors.append(doc.error(ikp, f"unknown input channel {spec.input_channel!r}",
                                    did_you_mean(spec.input_channel, list(channels))))
        else:
            senders[spec.input_channel].append("user")
            mt = channels[spec.input_channel].message_type
            if mt is not None and "text" not in {f.name for f in mt.fields}:
                errors.append(doc.error(ikp, f"input channel {spec.input_channel!r} has schema "
                                        f"{mt.name!r} without a `text` field for user input"))
    for cname, ch in channels.items():
        ch.listeners = tuple(listeners[cname])
        ch.senders = tuple(senders[cname])
        if ch.senders and not ch.listeners:
            errors.append(doc.error(("terrarium", "channels", cname),
                                    f"channel {cname!r} can be sent on (by "
                                    f"{', '.join(ch.senders)}) but nobody listens to it",
                                    "add it to some creature's channels.listen"))
        elif ch.type == "broadcast" and ch.senders and set(ch.listeners) <= set(ch.senders) \
                and len(ch.listeners) == 1 and ch.listeners == ch.senders:
            errors.append(doc.error(("terrarium", "channels", cname),
                                    f"broadcast channel {cname!r} is only heard by its only "
                                    "sender, so every send would reach nobody"))

    errors.extend(index.errors[seen:])
    if errors:
        raise ConfigErrors(once(errors))
    workspace = spec.workspace
    if workspace not in (None, "shared"):
        workspace = str((tpath.parent / str(workspace)).resolve())
    return Team(spec.name, tpath, creatures, channels, spec.input_channel, root, index,
                spec.transport, spec.transcription, workspace)


def load_single_creature(path: Path | str) -> Team:
    """A creature folder run on its own: a team of one, no channels."""
    path = config_file(Path(path).resolve())
    errors: list[ConfigError] = []
    index = build_index(path.parent)
    errors.extend(index.errors)
    seen = len(index.errors)
    lc = load_creature(path, index, errors)
    errors.extend(index.errors[seen:])
    if errors or lc is None:
        raise ConfigErrors(errors or [ConfigError("could not load the creature",
                                                  location=Location(path))])
    name = lc.config.name or path.parent.name
    cdef = CreatureDef(name, lc, hint_overrides=_hint_overrides(index, lc))
    return Team(name, path, {name: cdef}, {}, None, None, index)


def load_package(path: Path) -> tuple[PackageIndex, list[Team]]:
    """Validate a kohaku.yaml package: every creature, terrarium and schema it lists."""
    root = path.parent if path.is_file() else path
    index = build_index(root)
    errors = list(index.errors)
    seen = len(index.errors)
    pkg = index.add_root(root)
    if pkg is None:
        raise ConfigErrors(errors or [ConfigError(f"no {MANIFEST} in {root}",
                                                  location=Location(root))])
    teams: list[Team] = []
    missing = pkg.missing_entries()  # each at its own list entry, then not loaded again
    errors.extend(missing)
    gone = {e.location.key_path[:2] for e in missing}
    for i, ch in enumerate(pkg.manifest.channels):
        p = root / ch
        if ("channels", i) in gone:
            continue
        for f in sorted(p.glob("*.yaml")) if p.is_dir() else [p]:
            load_schema_file(f, errors)
    for i, c in enumerate(pkg.manifest.creatures):
        if ("creatures", i) not in gone:
            load_creature(root / c, index, errors)
    for i, t in enumerate(pkg.manifest.terrariums):
        if ("terrariums", i) in gone:
            continue
        try:
            teams.append(load_team(root / t))
        except ConfigErrors as exc:
            errors.extend(exc.errors)
    errors.extend(index.errors[seen:])
    if errors:
        raise ConfigErrors(once(errors))
    return index, teams


def load_any(path: Path | str) -> Team | tuple[PackageIndex, list[Team]]:
    """What ``terrarium validate PATH`` loads: a terrarium, a creature, or a package."""
    path = Path(path)
    p = path.resolve()
    if not p.exists():
        raise ConfigErrors([ConfigError(f"path not found: {path}", location=Location(path),
                                        suggestion="give a terrarium or creature folder")])
    if p.is_dir():
        if (p / TERRARIUM_FILE).is_file():
            return load_team(p)
        if (p / "config.yaml").is_file():
            return load_single_creature(p)
        if (p / MANIFEST).is_file():
            return load_package(p)
        raise ConfigErrors([ConfigError(
            f"{path} holds no {TERRARIUM_FILE}, config.yaml or {MANIFEST}",
            location=Location(p), suggestion="give a terrarium, creature or package folder")])
    if p.name == MANIFEST:
        return load_package(p)
    doc_first = p.read_text(encoding="utf-8", errors="replace").lstrip().startswith("terrarium:")
    if p.name == TERRARIUM_FILE or doc_first:
        return load_team(p)
    return load_single_creature(p)


__all__ = [
    "TERRARIUM_FILE",
    "ChannelDef",
    "CreatureDef",
    "SchemaIndex",
    "Team",
    "check_message_templates",
    "check_send_fill",
    "load_any",
    "load_package",
    "load_schema_file",
    "load_single_creature",
    "load_team",
]
