"""``kohaku.yaml`` packages: where they are and how ``@package/path`` resolves.

The search path is, in order: this repository's own package (shipped inside the wheel),
the folders above the file being loaded that hold a ``kohaku.yaml``, and every folder named
in ``TERRARIUM_PATH`` (``os.pathsep``-separated); the first package of a name wins.

Packages on ``TERRARIUM_PATH`` load lazily: only their names are read up front, and a
package is read and validated when a config references it (``@name/...``). An installed
package that is broken, or still in KohakuTerrarium's form, does not break a config that
never mentions it.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from terrarium.config.kohaku_compat import findings_to_errors, normalize_package
from terrarium.config.located import did_you_mean, from_validation_error, unknown_hint
from terrarium.config.models import KohakuPackage
from terrarium.config.yamlio import YamlDoc, load_yaml
from terrarium.errors import ConfigError, Location
from terrarium.paths import data_root

MANIFEST = "kohaku.yaml"


@dataclass(slots=True)
class Package:
    name: str
    root: Path
    manifest: KohakuPackage
    tools: dict[str, str] = field(default_factory=dict)  # KohakuTerrarium form: name → mod:Cls
    doc: YamlDoc | None = None  # the manifest as read, to point at one of its list entries

    def missing_entries(self) -> list[ConfigError]:
        """Each folder or file a manifest list names that is not there, reported at its
        own list entry (the ``path`` of a ``{name, path}`` entry)."""
        out: list[ConfigError] = []
        if self.doc is None:
            return out
        m = self.manifest
        for key, entries, what in (("creatures", m.creatures, "creature folder"),
                                   ("terrariums", m.terrariums, "terrarium folder"),
                                   ("channels", m.channels, "channel schema file or folder")):
            for i, rel in enumerate(entries):
                p = self.root / rel
                if key == "creatures":
                    ok = (p / "config.yaml").is_file() or (p.suffix in (".yaml", ".yml")
                                                           and p.is_file())
                elif key == "terrariums":
                    ok = (p / "terrarium.yaml").is_file() or (p.suffix in (".yaml", ".yml")
                                                              and p.is_file())
                else:
                    ok = p.exists()
                if not ok:
                    out.append(self._entry_error(key, i, f"{what} not found: {p}"))
        for i, s in enumerate(m.skills):
            p = self.root / s.path
            if not (p / "SKILL.md").is_file() and not p.is_file():
                out.append(self._entry_error("skills", i, f"skill {s.name!r} not found: {p}"))
        return out

    def _entry_error(self, key: str, i: int, message: str) -> ConfigError:
        assert self.doc is not None
        kp: tuple[str | int, ...] = (key, i, "path") if (key, i, "path") in self.doc.marks \
            else (key, i)
        return self.doc.error(kp, message, f"create it, or fix or remove this {key} entry")

    def skill_files(self) -> dict[str, Path]:
        """The package's skills by name: a folder's SKILL.md, or the file itself."""
        out: dict[str, Path] = {}
        for s in self.manifest.skills:
            p = (self.root / s.path).resolve()
            out[s.name] = p / "SKILL.md" if p.is_dir() else p
        return out

    def channel_dirs(self) -> list[Path]:
        dirs = []
        for entry in self.manifest.channels or ["channels"]:
            p = (self.root / entry).resolve()
            dirs.append(p if p.is_dir() else p.parent)
        return list(dict.fromkeys(dirs))


@dataclass(slots=True)
class PackageIndex:
    """Packages by name, in search order (the first one found under a name wins)."""

    packages: dict[str, Package] = field(default_factory=dict)
    errors: list[ConfigError] = field(default_factory=list)
    pending: dict[str, Path] = field(default_factory=dict)  # lazy: name → root, not yet read

    def add_lazy(self, root: Path) -> None:
        """Note a package by name only; it is read when something references it."""
        manifest = root / MANIFEST
        if not manifest.is_file():
            return
        name = _manifest_name(manifest) or root.name
        if name not in self.packages:
            self.pending.setdefault(name, root)

    def get(self, name: str) -> Package | None:
        """The package called ``name``, reading (and validating) it on first use."""
        if name not in self.packages and name in self.pending:
            self.add_root(self.pending.pop(name))
        return self.packages.get(name)

    def add_root(self, root: Path) -> Package | None:
        manifest = root / MANIFEST
        if not manifest.is_file():
            return None
        for pkg in self.packages.values():
            if pkg.root == root.resolve():
                return pkg
        try:
            doc = load_yaml(manifest)
        except ConfigError as exc:
            self.errors.append(exc)
            return None
        findings, tools = normalize_package(doc.data)
        self.errors.extend(findings_to_errors(doc, findings))
        try:
            model = KohakuPackage.model_validate(doc.data)
        except ValidationError as exc:
            self.errors.extend(from_validation_error(doc, exc, KohakuPackage, doc.data))
            return None
        for key in model.framework_hints:
            if problem := unknown_hint(key):
                self.errors.append(doc.error(("framework_hints", key), *problem))
        from terrarium.llm.settings import ModelSettings

        for pname, profile in model.llm_profiles.items():
            try:
                ModelSettings.model_validate(profile)
            except ValidationError as exc:
                self.errors.extend(from_validation_error(
                    doc, exc, ModelSettings, profile, base=("llm_profiles", pname)))
        pkg = Package(model.name, root.resolve(), model, tools, doc)
        self.packages.setdefault(model.name, pkg)
        return pkg

    def tools(self) -> dict[str, str]:
        """Tools the visible packages contribute by name (first package wins)."""
        out: dict[str, str] = {}
        for pkg in self.packages.values():
            for name, ref in pkg.tools.items():
                out.setdefault(name, ref)
        return out

    def skills(self) -> dict[str, Path]:
        """Skills the visible packages offer by name (first package wins); a lazy package's
        are read from its manifest without loading the rest of it (a skill is a file)."""
        out: dict[str, Path] = {}
        for pkg in self.packages.values():
            for name, path in pkg.skill_files().items():
                out.setdefault(name, path)
        for root in self.pending.values():
            entries = _manifest_data(root / MANIFEST).get("skills")
            for e in entries if isinstance(entries, list) else []:
                if isinstance(e, dict) and isinstance(e.get("name"), str) \
                        and isinstance(e.get("path"), str):
                    p = (root / e["path"]).resolve()
                    f = p / "SKILL.md" if p.is_dir() else p
                    if f.is_file():
                        out.setdefault(e["name"], f)
        return out

    def profile(self, name: str, near: Path) -> dict[str, Any] | None:
        """A named model profile: the nearest package's first, then any visible one (a lazy
        package that declares it is read now)."""
        owner = self.owning(near)
        for pkg in ([owner] if owner else []) + list(self.packages.values()):
            if name in pkg.manifest.llm_profiles:
                return dict(pkg.manifest.llm_profiles[name])
        for pname, root in list(self.pending.items()):
            if name in _manifest_profiles(root / MANIFEST):
                pkg = self.get(pname)
                if pkg is not None and name in pkg.manifest.llm_profiles:
                    return dict(pkg.manifest.llm_profiles[name])
        return None

    def profile_names(self) -> list[str]:
        names = {n for p in self.packages.values() for n in p.manifest.llm_profiles}
        for root in self.pending.values():
            names.update(_manifest_profiles(root / MANIFEST))
        return sorted(names)

    def owning(self, path: Path) -> Package | None:
        """The nearest package whose root holds ``path``."""
        best: Package | None = None
        for pkg in self.packages.values():
            if path.resolve().is_relative_to(pkg.root) and (
                best is None or len(pkg.root.parts) > len(best.root.parts)
            ):
                best = pkg
        return best

    def resolve_ref(self, ref: str, base_dir: Path, location: Location) -> Path:
        """``@pkg/sub/path`` → a path inside that package; anything else is relative,
        except KohakuTerrarium's project-relative ``creatures/NAME`` (or ``terrariums/``)
        that is not there: it is looked for in each folder above, up to the package."""
        if not ref.startswith("@"):
            here = (base_dir / ref).resolve()
            if here.exists() or Path(ref).parts[:1] not in (("creatures",), ("terrariums",)):
                return here
            for up in base_dir.resolve().parents:
                if (up / ref).exists():
                    return (up / ref).resolve()
                if (up / MANIFEST).is_file():
                    break
            return here
        name, _, rest = ref[1:].partition("/")
        root = self.pending.get(name)
        pkg = self.get(name)
        if pkg is None and root is not None:  # its own errors say why; resolve in it anyway
            return (root / rest).resolve()
        if pkg is None:
            known = sorted({*self.packages, *self.pending})
            raise ConfigError(
                f"unknown package {name!r} in reference {ref!r}",
                location=location,
                suggestion=did_you_mean(name, known)
                or f"known packages: {', '.join(known) or 'none'}; add its folder to "
                "TERRARIUM_PATH",
            )
        if not rest:
            raise ConfigError(f"reference {ref!r} names a package but no path inside it",
                              location=location, suggestion=f"write @{name}/creatures/NAME")
        return (pkg.root / rest).resolve()


def build_index(start: Path) -> PackageIndex:
    """Index the packages visible from ``start`` (a file or folder being loaded)."""
    index = PackageIndex()
    index.add_root(data_root())
    here = start.resolve()
    for folder in [here, *here.parents] if here.is_dir() else here.parents:
        index.add_root(folder)  # the package being loaded: read now
    for entry in os.environ.get("TERRARIUM_PATH", "").split(os.pathsep):
        if entry:
            index.add_lazy(Path(entry).expanduser())
    return index


def _manifest_data(manifest: Path) -> dict[str, Any]:
    """A manifest's raw mapping, read without validating it ({} when unreadable)."""
    import yaml

    try:
        data = yaml.safe_load(manifest.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, yaml.YAMLError):
        return {}
    return data if isinstance(data, dict) else {}


def _manifest_name(manifest: Path) -> str | None:
    """A manifest's ``name``, read without validating the rest."""
    name = _manifest_data(manifest).get("name")
    return name if isinstance(name, str) else None


def _manifest_profiles(manifest: Path) -> list[str]:
    """The model profile names a manifest declares, read without validating the rest."""
    profiles = _manifest_data(manifest).get("llm_profiles")
    return [str(k) for k in profiles] if isinstance(profiles, dict) else []


__all__ = [
    "MANIFEST",
    "Package",
    "PackageIndex",
    "build_index",
]
