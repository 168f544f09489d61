"""Loading a whole team and checking every cross reference before anything starts."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from terrarium.config.channel_schemas import (
    SchemaIndex,
    load_schema_file,
    resolve_schema,
    schema_dirs,
)
from terrarium.config.channel_settings import check_message_templates, check_send_fill
from terrarium.config.creature import (
    LoadedCreature,
    config_file,
    load_creature,
    load_inline_creature,
)
from terrarium.config.creature_checks import not_a_file
from terrarium.config.kohaku_compat import (
    CREATURE_UNSUPPORTED,
    ENTRY_UNSUPPORTED,
    TERRARIUM_UNSUPPORTED,
    WIRING_UNSUPPORTED,
    kt_channel_kinds,
    not_supported,
)
from terrarium.config.loaded_creature import kt_config_hint
from terrarium.config.located import did_you_mean, from_validation_error
from terrarium.config.models import (
    ChannelDecl,
    CreatureConfig,
    CreatureEntry,
    OutputWiring,
    RootSpec,
    TerrariumFile,
)
from terrarium.config.packages import MANIFEST, PackageIndex, build_index
from terrarium.config.team_types import TERRARIUM_FILE, ChannelDef, CreatureDef, Team
from terrarium.config.yamlio import YamlDoc, load_yaml
from terrarium.errors import (
    ConfigError,
    ConfigErrors,
    Location,
    closest_name,
)


def _hint_overrides(index: PackageIndex, lc: LoadedCreature) -> dict[str, str]:
    owner = index.owning(lc.path)
    merged = dict(owner.manifest.framework_hints) if owner else {}
    merged.update(lc.config.framework_hint_overrides)
    return merged


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
                        *WIRING_UNSUPPORTED["with_content"]), location=doc.location(kp)))
                    continue
                if w.prompt is not None:
                    errors.append(ConfigError(not_supported(*WIRING_UNSUPPORTED["prompt"]),
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
        errors.append(doc.error((*ekp, "config"), not_a_file("creature config", cpath),
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
    b = _TeamBuild(doc, tpath, index, errors)
    _load_channels(b, spec)
    first_seen: dict[str, int] = {}
    for i, entry in enumerate(spec.creatures):
        _add_creature(b, i, entry, inlines[i] if i < len(inlines) else {}, first_seen)
    root = _load_root(b, spec.root, root_inline) if spec.root is not None else None
    _check_input_channel(b, spec.input_channel)
    _check_audiences(b)
    errors.extend(index.errors[seen:])
    if errors:
        raise ConfigErrors(once(errors))
    workspace = spec.workspace
    if workspace not in (None, "shared"):
        workspace = str((tpath.parent / str(workspace)).resolve())
    return Team(spec.name, tpath, b.creatures, b.channels, spec.input_channel, root, index,
                spec.transport, spec.transcription, workspace)


@dataclass(slots=True)
class _TeamBuild:
    """A team in the making while ``load_team`` reads its file: where errors point, and the
    channels with who listens to and sends on each so far."""

    doc: YamlDoc
    tpath: Path
    index: PackageIndex
    errors: list[ConfigError]
    channels: dict[str, ChannelDef] = field(default_factory=dict)
    direct: dict[str, str] = field(default_factory=dict)  # KT output_wiring: channel → target
    listeners: dict[str, list[str]] = field(default_factory=dict)
    senders: dict[str, list[str]] = field(default_factory=dict)
    creatures: dict[str, CreatureDef] = field(default_factory=dict)


def _load_channels(b: _TeamBuild, spec: Any) -> None:
    """The declared channels with their schemas, then a direct channel per output_wiring
    target (KohakuTerrarium's form)."""
    schemas = SchemaIndex(schema_dirs(b.tpath.parent, b.index))
    for cname, decl in spec.channels.items():
        if not cname.isidentifier():
            fixed = cname.replace("-", "_")
            b.errors.append(b.doc.error(("terrarium", "channels", cname), not_supported(
                f"channel names with '-' ({cname!r})", f"{fixed!r}")
                if fixed.isidentifier() else f"channel name {cname!r} must be an identifier"))
        mt = resolve_schema(decl, cname, b.doc, schemas, b.errors)
        b.channels[cname] = ChannelDef(cname, decl.type, decl.description, decl.capacity, mt,
                                       max_bytes=decl.max_bytes)
    b.direct = _wiring_targets(spec, spec.channels, b.doc, b.errors)
    for cname, target in b.direct.items():
        b.channels[cname] = ChannelDef(cname, "queue", f"turn-end text delivered to {target}",
                                       64, None)
    b.listeners = {c: [] for c in b.channels}
    b.senders = {c: [] for c in b.channels}


def _add_creature(b: _TeamBuild, i: int, entry: CreatureEntry, inline: dict[str, Any],
                  first_seen: dict[str, int]) -> None:
    """One ``creatures`` entry: loaded, wired into the channel tables, its per-channel
    settings checked. A creature that fails to load is still wired as written: one
    mistake, one error (no "nobody listens" for the channels it would have heard)."""
    ekp = ("terrarium", "creatures", i)
    if entry.name in first_seen:
        b.errors.append(b.doc.error((*ekp, "name"), f"creature name {entry.name!r} is used "
                                    f"twice (first at creatures[{first_seen[entry.name]}])",
                                    "give each creature a unique name"))
        return
    first_seen[entry.name] = i
    if not entry.name.isidentifier():
        b.errors.append(b.doc.error((*ekp, "name"),
                                    f"creature name {entry.name!r} must be an identifier"))
    lc = _load_entry(entry, b.doc, ekp, inline, b.index, b.tpath, b.errors)
    wired = [w if isinstance(w, str) else w.to for w in entry.output_wiring
             if isinstance(w, str) or (w.with_content and w.prompt is None)]
    listen = [*entry.channels.listen, *(c for c, t in b.direct.items() if t == entry.name)]
    can_send, heard = list(entry.channels.can_send), list(entry.channels.listen)
    for role, names, table in (("listen", list(listen), b.listeners),
                               ("can_send", list(can_send), b.senders),
                               ("output_wiring", wired, b.senders)):
        for j, ch in enumerate(names):
            kp = (*ekp, "channels", role, j) if role != "output_wiring" else (*ekp, role, j)
            if ch in b.channels:
                if entry.name not in table[ch]:
                    table[ch].append(entry.name)
                continue
            b.errors.append(b.doc.error(kp, f"unknown channel {ch!r} in {role}",
                                        did_you_mean(ch, list(b.channels))
                                        or f"declare it under terrarium.channels "
                                        f"(declared: {', '.join(b.channels) or 'none'})"))
            # one mistake, one error: wire the channel the typo surely meant, so that no
            # "nobody listens" or unwired-template error follows from it
            meant = closest_name(ch, list(b.channels))
            if meant is not None and entry.name not in table[meant]:
                table[meant].append(entry.name)
                if role == "listen":
                    heard.append(meant)
                elif role == "can_send":
                    can_send.append(meant)
    for j, ch in enumerate(wired):
        mt = b.channels[ch].message_type if ch in b.channels else None
        if mt is not None and "text" not in {f.name for f in mt.fields}:
            b.errors.append(b.doc.error((*ekp, "output_wiring", j),
                                        f"channel {ch!r} has schema {mt.name!r} without a "
                                        "`text` field, so turn-end text cannot be delivered "
                                        "on it"))
    if lc is not None:
        check_send_fill(lc, entry.name, can_send, b.channels, b.errors)
        check_message_templates(lc, entry.name, heard, b.channels, b.errors)
        b.creatures[entry.name] = CreatureDef(
            entry.name, lc, tuple(listen), tuple(entry.channels.can_send),
            tuple(wired), _hint_overrides(b.index, lc),
            inline=entry.base_config is not None or bool(inline))


def _load_root(b: _TeamBuild, spec: RootSpec,
               root_inline: dict[str, Any] | None) -> CreatureDef | None:
    """The root creature: it hears the channels it lists (every one, ``*``, in
    KohakuTerrarium's form) and takes the name ``root``."""
    rkp = ("terrarium", "root")
    kt_form = spec.base_config is not None or bool(root_inline)
    hears = spec.listen if spec.listen or not kt_form else "*"
    root_listen = list(b.channels) if hears == "*" else list(hears)
    root_listen += [c for c, t in b.direct.items() if t == "root" and c not in root_listen]
    for j, ch in enumerate(hears if hears != "*" else ()):
        if ch not in b.channels:
            b.errors.append(b.doc.error((*rkp, "listen", j), f"unknown channel {ch!r} in listen",
                                        did_you_mean(ch, list(b.channels))))
    ref = _creature_ref(spec, b.doc, rkp, b.errors)
    root: CreatureDef | None = None
    try:
        lc = None
        if ref is not None and kt_form:
            lc = load_inline_creature({**(root_inline or {}), "base_config": ref,
                                       "name": "root"}, b.doc, rkp, b.index, b.errors, root=True)
        elif ref is not None:
            rpath = config_file(b.index.resolve_ref(ref, b.tpath.parent,
                                                    b.doc.location((*rkp, "config"))))
            lc = load_creature(rpath, b.index, b.errors) if rpath.is_file() else None
            if not rpath.is_file():
                b.errors.append(b.doc.error((*rkp, "config"),
                                            f"root creature config not found: {rpath}"))
        heard = tuple(c for c in root_listen if c in b.channels)
        if lc is not None:
            root = CreatureDef("root", lc, listen=heard,
                               hint_overrides=_hint_overrides(b.index, lc), inline=kt_form)
        for ch in heard:  # wired even when it failed to load: its error is the one
            b.listeners[ch].append("root")
        if "root" in b.creatures:
            b.errors.append(b.doc.error(rkp, "a creature is already named "
                                        "'root', the name the root creature takes",
                                        "rename that creature"))
    except ConfigError as exc:
        b.errors.append(exc)
    return root


def _check_input_channel(b: _TeamBuild, name: str | None) -> None:
    """The input channel is declared and carries ``text``; the user is one of its senders."""
    if name is None:
        return
    ikp = ("terrarium", "input_channel")
    if name not in b.channels:
        b.errors.append(b.doc.error(ikp, f"unknown input channel {name!r}",
                                    did_you_mean(name, list(b.channels))))
        return
    b.senders[name].append("user")
    mt = b.channels[name].message_type
    if mt is not None and "text" not in {f.name for f in mt.fields}:
        b.errors.append(b.doc.error(ikp, f"input channel {name!r} has schema "
                                    f"{mt.name!r} without a `text` field for user input"))


def _check_audiences(b: _TeamBuild) -> None:
    """Each channel gets its listeners and senders; one sent on must be heard by someone
    other than its only sender."""
    for cname, ch in b.channels.items():
        ch.listeners = tuple(b.listeners[cname])
        ch.senders = tuple(b.senders[cname])
        if ch.senders and not ch.listeners:
            b.errors.append(b.doc.error(("terrarium", "channels", cname),
                                        f"channel {cname!r} can be sent on (by "
                                        f"{', '.join(ch.senders)}) but nobody listens to it",
                                        "add it to some creature's channels.listen"))
        elif ch.type == "broadcast" and ch.senders and set(ch.listeners) <= set(ch.senders) \
                and len(ch.listeners) == 1 and ch.listeners == ch.senders:
            b.errors.append(b.doc.error(("terrarium", "channels", cname),
                                        f"broadcast channel {cname!r} is only heard by its "
                                        "only sender, so every send would reach nobody"))


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
        what = (f"{path} is a symlink to {p}, which does not exist" if path.is_symlink()
                else f"path not found: {path}")
        raise ConfigErrors([ConfigError(what, location=Location(path),
                                        suggestion="give a terrarium or creature folder")])
    if p.is_dir():
        if (p / TERRARIUM_FILE).is_file():
            return load_team(p)
        if (p / "config.yaml").is_file():
            return load_single_creature(p)
        if (p / MANIFEST).is_file():
            return load_package(p)
        odd = [p / n for n in (TERRARIUM_FILE, "config.yaml", MANIFEST) if (p / n).exists()]
        raise ConfigErrors([ConfigError(
            f"{odd[0]} is a folder, not a file" if odd
            else f"{path} holds no {TERRARIUM_FILE}, config.yaml or {MANIFEST}",
            location=Location(p), suggestion=(None if odd else kt_config_hint(p))
            or "give a terrarium, creature or package folder")])
    if not p.is_file():  # a FIFO would block the read below, a device never end
        raise ConfigErrors([ConfigError(
            f"{path} is not a regular file (a pipe, socket or device)", location=Location(p),
            suggestion="give a terrarium, creature or package folder")])
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
