"""KohakuTerrarium's configuration forms, read as terrarium's own where the meaning matches.

terrarium borrows KohakuTerrarium's vocabulary, so its users' configs should load. This module
rewrites the raw YAML data of a creature, a package or a terrarium entry into terrarium's form
*before* the schemas see it, and answers each KohakuTerrarium key that has no equivalent with
a located "not supported ... use Y instead" line instead of "unknown key, did you mean".
Keys that are neither terrarium's nor KohakuTerrarium's stay ordinary unknown-key errors.

Every decision is a :class:`Finding`: ``unsupported`` ones become errors when loading and
"dropped" lines in ``terrarium migrate``'s report; ``changed`` ones are silent when loading
and reported by migrate. The tables it goes by (KohakuTerrarium's keys, tools, plugins,
output types and transports) are in :mod:`terrarium.config.kohaku_tables`.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from terrarium.config.kohaku_events import normalize_input, normalize_triggers
from terrarium.config.kohaku_finding import Finding, not_supported
from terrarium.config.kohaku_tables import (
    CHANNEL_CALL_REF,
    CONTROLLER_MIRRORED,
    CONTROLLER_UNSUPPORTED,
    CREATURE_UNSUPPORTED,
    ENTRY_UNSUPPORTED,
    KT_CHANNEL_CALLS,
    KT_HINT_KEYS,
    KT_MCP_TRANSPORTS,
    KT_PLUGIN_BUDGET,
    KT_PLUGIN_COMPACTION,
    KT_PLUGINS_UNSUPPORTED,
    KT_PROVIDERS,
    KT_SAME_AS_TERRARIUM,
    KT_TOOL_ALIASES,
    KT_TOOL_CONFIG_UNSUPPORTED,
    KT_TOOL_SAME,
    KT_TOOL_UNSUPPORTED,
    OUTPUT_TYPE_ALIASES,
    OUTPUT_TYPE_UNSUPPORTED,
    PACKAGE_UNSUPPORTED,
    ROOT_TEAM_TOOL_PREFIXES,
    TERRARIUM_UNSUPPORTED,
    TOOL_ENTRY_META,
    WIRING_UNSUPPORTED,
)
from terrarium.config.models import MAX_ITERATIONS
from terrarium.config.yamlio import KeyPath, YamlDoc
from terrarium.errors import ConfigError

__all__ = [
    "CONTROLLER_UNSUPPORTED",
    "CREATURE_UNSUPPORTED",
    "ENTRY_UNSUPPORTED",
    "KT_TOOL_ALIASES",
    "KT_TOOL_UNSUPPORTED",
    "OUTPUT_TYPE_UNSUPPORTED",
    "PACKAGE_UNSUPPORTED",
    "ROOT_TEAM_TOOL_PREFIXES",
    "TERRARIUM_UNSUPPORTED",
    "WIRING_UNSUPPORTED",
    "Finding",
    "findings_to_errors",
    "kt_channel_kinds",
    "normalize_creature",
    "normalize_package",
    "not_supported",
]

def _kt_form(key: str, value: Any) -> bool:
    """Whether a key terrarium also has (in its own form) is written KohakuTerrarium's way:
    sub-agents as a list, plugins or triggers not written as a list."""
    if key == "subagents":
        return not isinstance(value, dict)
    if key == "plugins":  # a list is read entry by entry (_normalize_plugins)
        return not isinstance(value, list)
    if key == "triggers":  # a list is read entry by entry (kohaku_events)
        return not isinstance(value, list)
    return True


def findings_to_errors(doc: YamlDoc, findings: list[Finding], base: KeyPath = ()) -> list[
        ConfigError]:
    """The ``unsupported`` findings as located, one-line errors."""
    return [ConfigError(f.text, location=doc.location((*base, *f.key_path)))
            for f in findings if f.kind == "unsupported"]


def _drop(data: dict[str, Any], key: str, kp: KeyPath, feature: str, instead: str,
          out: list[Finding]) -> None:
    data.pop(key, None)
    out.append(Finding("unsupported", kp, not_supported(feature, instead)))


def _tool_ref(entry: Any, i: int, known: Callable[[str], bool], package_tools: dict[str, str],
              root: bool, out: list[Finding]) -> tuple[str | None, dict[str, Any]]:
    """One ``tools:`` entry (a name or a mapping) → terrarium's tool reference and options."""
    if isinstance(entry, str):
        entry = {"name": entry}
    if not isinstance(entry, dict) or not isinstance(entry.get("name"), str):
        return (entry if isinstance(entry, str) else None), {}
    name: str = entry["name"]
    kind = entry.get("type", "builtin")
    options = dict(entry.get("options") or {})
    options.update({k: v for k, v in entry.items() if k not in TOOL_ENTRY_META})
    kp: KeyPath = ("tools", i)
    for key, (feature, instead) in KT_TOOL_CONFIG_UNSUPPORTED.items():
        if key in options:
            options.pop(key)
            where = (*kp, "options", key) if key in (entry.get("options") or {}) else (*kp, key)
            out.append(Finding("unsupported", where, not_supported(feature, instead)))
    if entry.get("doc") is not None:
        out.append(Finding("unsupported", (*kp, "doc"), not_supported(
            "tool doc overrides (`doc:`)", "the tool's own documentation")))
    if kind == "mcp":
        out.append(Finding("unsupported", kp, not_supported(
            f"MCP tool {name!r} (`type: mcp`)",
            "`mcp_servers`-free tools: a Python tool class `package.module:Class`")))
        return None, {}
    if kind == "trigger":
        out.append(Finding("unsupported", kp, not_supported(
            f"trigger tool {name!r} (`type: trigger`)",
            KT_TOOL_UNSUPPORTED.get(name, "messages on a channel"))))
        return None, {}
    if kind in ("custom", "package"):
        module = entry.get("module")
        cls = entry.get("class") or entry.get("class_name")
        if isinstance(module, str) and isinstance(cls, str) and not module.endswith(".py") \
                and "/" not in module:
            return f"{module}:{cls}", options
        if name in package_tools and not module:
            return package_tools[name], options
        out.append(Finding("unsupported", kp, not_supported(
            f"tool modules loaded from a file path ({module!r})",
            "an importable module: `package.module:Class` in `tools`")))
        return None, {}
    if kind != "builtin":
        return name, options  # the schema/registry explains an unknown type or name
    if known(name):
        return name, options
    if name in KT_CHANNEL_CALLS:
        out.append(Finding("changed", kp, f"tool {name!r} is the `send_channel` call "
                                          "(`channel_call: true`)"))
        return CHANNEL_CALL_REF, {}
    alias = KT_TOOL_ALIASES.get(name)
    if alias and known(alias):
        out.append(Finding("changed", kp, f"tool {name!r} is terrarium's {alias!r}"))
        if alias == "shell" and "max_output" in options:  # KohakuTerrarium's output cap
            options.setdefault("max_output_bytes", options.pop("max_output"))
        return alias, options
    if name in package_tools:
        out.append(Finding("changed", kp, f"tool {name!r} is {package_tools[name]} (package)"))
        return package_tools[name], options
    if root and name.startswith(ROOT_TEAM_TOOL_PREFIXES):
        out.append(Finding("changed", kp, f"tool {name!r} dropped: the root creature gets "
                                          "terrarium's team tools by itself"))
        return None, {}
    if name.startswith(ROOT_TEAM_TOOL_PREFIXES):
        out.append(Finding("unsupported", kp, not_supported(
            f"team tool {name!r} on a creature that is not the root",
            "channels (`channels.can_send`); only the root creature operates the team")))
        return None, {}
    if name in KT_TOOL_UNSUPPORTED or alias or name in KT_TOOL_SAME:
        instead = KT_TOOL_UNSUPPORTED.get(name) or (f"`{alias}`" if alias else
                                                    "another of terrarium's built-in tools")
        out.append(Finding("unsupported", kp, not_supported(f"built-in tool {name!r}", instead)))
        return None, {}
    return name, options  # not KohakuTerrarium's either: the registry reports it


def _normalize_tools(data: dict[str, Any], known: Callable[[str], bool],
                     package_tools: dict[str, str], root: bool, out: list[Finding],
                     sources: dict[str, KeyPath]) -> None:
    tools = data.get("tools")
    if not isinstance(tools, list):
        return
    refs: list[Any] = []
    options: dict[str, dict[str, Any]] = {}
    for i, entry in enumerate(tools):
        ref, opts = _tool_ref(entry, i, known, package_tools, root, out)
        if ref == CHANNEL_CALL_REF:
            data["channel_call"] = True
            continue
        if ref is None:
            continue
        refs.append(ref)
        if opts:
            tname = ref.rpartition(":")[2] if ":" in ref else ref
            options[tname] = opts
            # where a mistake in these options was written
            sources[tname] = ("tools", i, "options") if isinstance(entry, dict) and isinstance(
                entry.get("options"), dict) else ("tools", i)
    data["tools"] = refs
    if options:
        from terrarium.config.models import CreatureConfig

        if "tool_options" in CreatureConfig.model_fields:
            merged = dict(options)
            merged.update(data.get("tool_options") or {})
            data["tool_options"] = merged
        else:
            for tname in options:
                out.append(Finding("unsupported", ("tools",), not_supported(
                    f"options on tool {tname!r}", "the tool's defaults")))


def _hard(limit: Any) -> Any:
    """A KohakuTerrarium budget, ``N`` or ``[soft, hard]``: its hard limit."""
    return limit[-1] if isinstance(limit, list) and limit else limit


def _kt_budget(p: dict[str, Any], kp: KeyPath, out: list[Finding]) -> dict[str, Any]:
    """KohakuTerrarium's ``budget`` plugin → terrarium's ``tool_budget``: its tool-call
    budget (``max_tool_calls``, or the hard end of ``tool_call_budget: [soft, hard]``) is
    ``max_calls``; its turn and wall-time budgets have no plugin here, so each is a line."""
    entry: dict[str, Any] = {"module": "tool_budget", "name": "tool_budget"}
    opts = p.get("options") if isinstance(p.get("options"), dict) else {}
    calls = opts.get("max_calls", opts.get("max_tool_calls", _hard(opts.get(
        "tool_call_budget"))))
    if isinstance(calls, int) and not isinstance(calls, bool):
        entry["options"] = {"max_calls": calls}
    out.append(Finding("changed", kp, f"plugin {p.get('name')!r} is terrarium's `tool_budget` "
                       f"(tool calls per turn{f': {calls}' if 'options' in entry else ''})"))
    for key, instead in (("turn_budget", "`max_iterations` (model rounds per turn) or "
                                         "`terrarium run --max-turns N`"),
                         ("walltime_budget", "`terrarium run --timeout SECONDS`")):
        if key in opts:
            out.append(Finding("unsupported", (*kp, "options", key), not_supported(
                f"budget plugin's `{key}`", instead)))
    return entry


def _normalize_plugins(data: dict[str, Any], out: list[Finding]) -> None:
    """Entry by entry: KohakuTerrarium's built-ins map onto terrarium's (budget →
    ``tool_budget``, auto-compact → ``compaction: summarize``); its plugin classes, which
    need its runtime, get one line each."""
    plugins = data.get("plugins")
    if not isinstance(plugins, list):
        return
    kept: list[Any] = []
    for i, p in enumerate(plugins):
        if isinstance(p, str):  # KohakuTerrarium's shorthand: a plugin by its name
            p = {"name": p}
        if not isinstance(p, dict):
            kept.append(p)
            continue
        name = p.get("name")
        kp: KeyPath = ("plugins", i)
        if isinstance(p.get("module"), str) and not {"class", "class_name", "type"} & set(p):
            kept.append(p)  # terrarium's own form
            continue
        if "module" not in p and not {"class", "class_name", "type", "name"} & set(p):
            kept.append(p)  # no form of KohakuTerrarium's either (`modul:`): one typo error
            continue
        if "module" not in p and name in KT_PLUGIN_BUDGET:
            kept.append(_kt_budget(p, kp, out))
        elif "module" not in p and name in KT_PLUGIN_COMPACTION:
            data.setdefault("compaction", "summarize")
            out.append(Finding("changed", kp, f"plugin {name!r} is `compaction: summarize`"))
        elif "module" not in p and name in KT_PLUGINS_UNSUPPORTED:
            out.append(Finding("unsupported", kp, not_supported(
                f"built-in plugin {name!r}", KT_PLUGINS_UNSUPPORTED[name])))
        elif "module" not in p and name in ("tool_budget", "redactor"):
            kept.append({**p, "module": name})
        else:
            cls = p.get("class") or p.get("class_name")
            what = f"{p.get('module')}.{cls}" if cls else (p.get("module") or name)
            out.append(Finding("unsupported", kp, not_supported(
                f"plugin {what!r} (it runs inside KohakuTerrarium)",
                "a terrarium plugin (`module: package.module:Class`) or the shipped "
                "`tool_budget` and `redactor`")))
    if kept:
        data["plugins"] = kept
    else:
        data.pop("plugins", None)


def _normalize_named_outputs(data: dict[str, Any], out: list[Finding]) -> None:
    output = data.get("output")
    named = output.get("named_outputs") if isinstance(output, dict) else None
    if not isinstance(named, dict):
        return
    for oname in list(named):
        spec = named[oname]
        kind = spec.get("type") if isinstance(spec, dict) else None
        if isinstance(kind, str) and kind in OUTPUT_TYPE_UNSUPPORTED:
            feature, instead = OUTPUT_TYPE_UNSUPPORTED[kind]
            named.pop(oname)
            out.append(Finding("unsupported", ("output", "named_outputs", oname, "type"),
                               not_supported(f"{feature} (named output {oname!r})", instead)))
            if output.get("default") == oname:
                output.pop("default")


def _normalize_output(data: dict[str, Any], out: list[Finding]) -> None:
    output = data.get("output")
    if not isinstance(output, dict):
        return
    for key in ("module", "class", "class_name", "options"):
        if key in output:
            _drop(output, key, ("output", key), "custom output modules",
                  "a named output of type tts, stdout or file", out)
    direct = output.pop("controller_direct", True)
    kind = output.pop("type", None)
    if kind is None:
        return
    if kind in OUTPUT_TYPE_UNSUPPORTED:
        feature, instead = OUTPUT_TYPE_UNSUPPORTED[kind]
        out.append(Finding("unsupported", ("output", "type"), not_supported(feature, instead)))
        return
    target = OUTPUT_TYPE_ALIASES.get(kind)
    if target is None:
        output["type"] = kind  # not KohakuTerrarium's: let the schema name it
        return
    named = output.setdefault("named_outputs", {})
    if isinstance(named, dict) and "stdout" not in named:
        named["stdout"] = {"type": target, "description": "printed to the console"}
    if direct and output.get("default") is None:
        output["default"] = "stdout"
    out.append(Finding("changed", ("output", "type"),
                       f"output.type {kind} is a default named output `stdout`"))


def _normalize_controller(data: dict[str, Any], out: list[Finding]) -> None:
    if isinstance(data.get("llm"), str):  # `llm: NAME` beside the controller: its preset
        name = data.pop("llm")
        if data.get("controller") is None:
            data["controller"] = {}
        ctl = data["controller"]
        if isinstance(ctl, dict):
            ctl.setdefault("llm", name)
            out.append(Finding("changed", ("llm",), f"llm {name} is controller.llm {name}"))
    ctl = data.get("controller")
    if not isinstance(ctl, dict):
        return
    if isinstance(ctl.get("preset"), str):  # another name for the same choice
        ctl.setdefault("llm", ctl.pop("preset"))
    for key in ("llm", "model"):  # KohakuTerrarium's variation selector: `NAME@group=option`
        name, at, selector = ctl.get(key).partition("@") if isinstance(
            ctl.get(key), str) else ("", "", "")
        if at and name and selector and (key == "llm" or not {"base_url", "provider"} & set(
                ctl)):  # a server's own model id may hold an '@'
            ctl[key] = name
            out.append(Finding("unsupported", ("controller", key), not_supported(
                f"model variation selector '@{selector}'",
                f"the option itself beside `{key}: {name}`, e.g. `reasoning_effort: high` "
                "(sent to OpenAI-compatible servers) or the provider's field in "
                "`extra_body`")))
    for key in CONTROLLER_MIRRORED:
        if key in ctl:
            value = ctl.pop(key)
            if key not in data:
                data[key] = value
                out.append(Finding("changed", ("controller", key), f"controller.{key} is {key}"))
    for key, (feature, instead) in CONTROLLER_UNSUPPORTED.items():
        if key in ctl:
            _drop(ctl, key, ("controller", key), feature, instead, out)
    if ctl.get("provider") in KT_PROVIDERS:
        _drop(ctl, "provider", ("controller", "provider"), f"provider {ctl['provider']!r}",
              "`provider: openai` with the service's OpenAI-compatible `base_url` and "
              "`api_key_env`", out)
    if ctl.get("max_tokens", 0) is None:
        ctl.pop("max_tokens")


def _normalize_mcp_servers(data: dict[str, Any], out: list[Finding]) -> None:
    """KohakuTerrarium lists servers (``[{name, transport, …}]``); terrarium maps name → server.

    ``transport`` is implied by ``command`` (stdio) or ``url`` (streamable HTTP), and
    ``connect_timeout`` is terrarium's ``startup_timeout``.
    """
    servers = data.get("mcp_servers")
    if not isinstance(servers, list):
        return
    mapped: dict[str, Any] = {}
    for i, entry in enumerate(servers):
        if not isinstance(entry, dict) or not isinstance(entry.get("name"), str):
            continue  # the schema reports what is wrong with it
        entry = dict(entry)
        name = entry.pop("name")
        transport = entry.pop("transport", None)
        if transport is not None and KT_MCP_TRANSPORTS.get(str(transport)) is None:
            text = not_supported(f"the MCP transport {transport!r}",
                                 "`command` (stdio) or `url` (streamable HTTP)")
            out.append(Finding("unsupported", ("mcp_servers", i, "transport"), text))
            continue
        if "connect_timeout" in entry:
            entry["startup_timeout"] = entry.pop("connect_timeout")
        mapped[name] = entry
    data["mcp_servers"] = mapped
    out.append(Finding("changed", ("mcp_servers",),
                       "the `mcp_servers` list became a mapping of server name to settings"))


def _kt_max_iterations(data: dict[str, Any], out: list[Finding]) -> None:
    """KohakuTerrarium's ``max_iterations`` is one pool of model calls for the creature's
    whole run, shared with its sub-agents (0 or null: no pool); terrarium's is the rounds
    of one turn (1 to MAX_ITERATIONS). A value terrarium's range holds keeps terrarium's
    meaning; any other is KohakuTerrarium's pool, which terrarium does not have."""
    if "max_iterations" not in data:
        return
    value = data["max_iterations"]
    if value is not None and (not isinstance(value, int) or isinstance(value, bool)
                              or 1 <= value <= MAX_ITERATIONS):
        return  # terrarium's own meaning, or a wrong type the schema names
    shown = "null" if value is None else value
    _drop(data, "max_iterations", ("max_iterations",),
          f"`max_iterations: {shown}` (a budget of model calls for the whole run, shared "
          "with sub-agents)",
          f"`max_iterations` from 1 to {MAX_ITERATIONS} (model rounds per turn) or "
          "`terrarium run --max-turns N` (turns in the run)", out)


def _same_as_terrarium(owner: dict[str, Any], prefix: KeyPath, out: list[Finding]) -> None:
    """KohakuTerrarium keys set to what terrarium does anyway (``include_tools_in_prompt:
    true``, ``ephemeral: false``, …): dropped and reported, never refused."""
    for key, (value, why) in KT_SAME_AS_TERRARIUM.items():
        if key in owner and owner[key] == value and type(owner[key]) is type(value):
            owner.pop(key)
            out.append(Finding("changed", (*prefix, key), f"{'.'.join((*prefix, key))}: "
                               f"{json.dumps(value)} dropped ({why})"))


def _hint_keys(data: dict[str, Any], key: str, out: list[Finding]) -> None:
    """KohakuTerrarium's hint names (``framework.execution_model.dynamic``) → terrarium's
    (``execution_dynamic``), the same four blocks of the prompt."""
    hints = data.get(key)
    if not isinstance(hints, dict):
        return
    for kt, ours in KT_HINT_KEYS.items():
        if kt in hints:
            value = hints.pop(kt)
            hints.setdefault(ours, value)
            out.append(Finding("changed", (key, ours), f"{key}: hint {kt!r} is {ours!r}"))


def normalize_creature(data: dict[str, Any], *, known_tool: Callable[[str], bool],
                       package_tools: dict[str, str] | None = None,
                       root: bool = False,
                       option_sources: dict[str, KeyPath] | None = None) -> list[Finding]:
    """Rewrite one creature mapping (a config.yaml or an inline override) in place.
    ``option_sources`` gets, for each tool whose KohakuTerrarium entry carried options
    (now under ``tool_options``), the key path of that entry."""
    out: list[Finding] = []
    _same_as_terrarium(data, (), out)
    if isinstance(data.get("controller"), dict):
        _same_as_terrarium(data["controller"], ("controller",), out)
    depth = data.get("max_subagent_depth")
    if isinstance(depth, int) and not isinstance(depth, bool) and 1 <= depth <= 8 \
            and "subagent_depth" not in data:
        data["subagent_depth"] = data.pop("max_subagent_depth")
        out.append(Finding("changed", ("max_subagent_depth",),
                           f"max_subagent_depth {depth} is subagent_depth {depth}"))
    for key, (feature, instead) in CREATURE_UNSUPPORTED.items():
        if key in data and _kt_form(key, data[key]):
            _drop(data, key, (key,), feature, instead, out)
    _kt_max_iterations(data, out)
    normalize_triggers(data, out)
    normalize_input(data, out)
    fmt_at: KeyPath = ("tool_format",) if "tool_format" in data else ("controller",
                                                                       "tool_format")
    _normalize_controller(data, out)
    if isinstance(data.get("tool_format"), dict):
        _drop(data, "tool_format", fmt_at, "custom tool-call formats (`tool_format` as a "
              "mapping)", "`tool_format: bracket`, `xml` or `native`", out)
    _normalize_mcp_servers(data, out)
    _normalize_tools(data, known_tool, package_tools or {}, root, out,
                     {} if option_sources is None else option_sources)
    _normalize_plugins(data, out)
    _normalize_output(data, out)
    _normalize_named_outputs(data, out)
    _hint_keys(data, "framework_hint_overrides", out)
    skills = data.get("skills")
    if isinstance(skills, str):  # `skills: "*"` or one folder
        data["skills"] = [skills]
    return out


def kt_channel_kinds(spec: dict[str, Any]) -> list[tuple[str, str, str]]:
    """The kind KohakuTerrarium gives each channel of a ``terrarium:`` mapping written
    without ``type``: a channel several creatures listen to and talk on (a team chat) is a
    broadcast, every listener hearing every message; any other is a queue. Returns
    (channel, kind, why) and writes the kind into the mapping."""
    channels = spec.get("channels")
    if not isinstance(channels, dict):
        return []
    listen: dict[str, set[str]] = {}
    send: dict[str, set[str]] = {}
    for entry in spec.get("creatures") or []:
        wiring = entry.get("channels") if isinstance(entry, dict) else None
        if not isinstance(wiring, dict):
            continue
        for role, table in (("listen", listen), ("can_send", send)):
            names = wiring.get(role)
            for ch in names if isinstance(names, list) else []:
                if isinstance(ch, str):
                    table.setdefault(ch, set()).add(str(entry.get("name")))
    out: list[tuple[str, str, str]] = []
    for cname, decl in channels.items():
        if not isinstance(decl, dict) or "type" in decl:
            continue
        hearers = listen.get(cname, set())
        kind = "broadcast" if len(hearers) > 1 and hearers & send.get(cname, set()) else "queue"
        decl["type"] = kind
        out.append((str(cname), kind, f"{len(hearers)} creatures listen and talk on it: every "
                    "listener hears every message" if kind == "broadcast"
                    else "one listener takes each message"))
    return out


def _list_entry(entry: Any, i: int, key: str, out: list[Finding]) -> Any:
    """A ``{name, path, …}`` entry of a kohaku.yaml list → its path."""
    if not isinstance(entry, dict):
        return entry
    path = entry.get("path")
    if isinstance(path, str):
        return path
    name = entry.get("name")
    if isinstance(name, str):  # KohakuTerrarium's convention: creatures/<name>
        out.append(Finding("changed", (key, i), f"{key} entry {name!r} is {key}/{name}"))
        return f"{key}/{name}"
    return entry


def normalize_package(data: dict[str, Any]) -> tuple[list[Finding], dict[str, str]]:
    """Rewrite a kohaku.yaml mapping in place; also return the tools it contributes
    (name → ``module:Class``), which its creatures may name."""
    out: list[Finding] = []
    tools: dict[str, str] = {}
    for i, t in enumerate(data.pop("tools", None) or []):
        if isinstance(t, dict) and all(isinstance(t.get(k), str) for k in ("name", "module",
                                                                           "class")):
            tools[t["name"]] = f"{t['module']}:{t['class']}"
        else:
            out.append(Finding("unsupported", ("tools", i), not_supported(
                "package tools without `name`, `module` and `class`",
                "`package.module:Class` in a creature's `tools`")))
    for key, (feature, instead) in PACKAGE_UNSUPPORTED.items():
        if key in data:
            _drop(data, key, (key,), feature, instead, out)
    if "llm_presets" in data:
        presets = data.pop("llm_presets")
        profiles = data.setdefault("llm_profiles", {})
        for i, p in enumerate(presets if isinstance(presets, list) else []):
            if isinstance(p, dict) and isinstance(p.get("name"), str) and len(p) > 1:
                profiles.setdefault(p["name"], {k: v for k, v in p.items() if k != "name"})
            else:
                out.append(Finding("unsupported", ("llm_presets", i), not_supported(
                    "LLM presets whose settings live outside kohaku.yaml",
                    "`llm_profiles: {NAME: {base_url, model, api_key_env, ...}}`")))
    _hint_keys(data, "framework_hints", out)
    for key in ("creatures", "terrariums", "channels"):
        if isinstance(data.get(key), list):
            meta = sorted({k for e in data[key] if isinstance(e, dict) and isinstance(
                e.get("path"), str) for k in e} - {"path"})
            data[key] = [_list_entry(e, i, key, out) for i, e in enumerate(data[key])]
            if meta:
                out.append(Finding("changed", (key,), f"{key} entries are written as their "
                                   f"paths; their {', '.join(meta)} (KohakuTerrarium's "
                                   "catalogue metadata) are not kept"))
    return out, tools
