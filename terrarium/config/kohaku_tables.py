"""What KohakuTerrarium's configuration has and terrarium reads differently or not at all:
the tables :mod:`terrarium.config.kohaku_compat` rewrites a file by (each key, tool,
plugin, output type or transport: terrarium's equivalent, or the feature and what to use
instead). Data only; kohaku_compat re-exports the names its callers use.
"""

from __future__ import annotations

__all__ = [
    "CHANNEL_CALL_REF",
    "CONTROLLER_MIRRORED",
    "CONTROLLER_UNSUPPORTED",
    "CREATURE_UNSUPPORTED",
    "ENTRY_UNSUPPORTED",
    "KT_CHANNEL_CALLS",
    "KT_HINT_KEYS",
    "KT_MCP_TRANSPORTS",
    "KT_PLUGINS_UNSUPPORTED",
    "KT_PLUGIN_BUDGET",
    "KT_PLUGIN_COMPACTION",
    "KT_PROVIDERS",
    "KT_SAME_AS_TERRARIUM",
    "KT_TOOL_ALIASES",
    "KT_TOOL_CONFIG_UNSUPPORTED",
    "KT_TOOL_SAME",
    "KT_TOOL_UNSUPPORTED",
    "OUTPUT_TYPE_ALIASES",
    "OUTPUT_TYPE_UNSUPPORTED",
    "PACKAGE_UNSUPPORTED",
    "ROOT_TEAM_TOOL_PREFIXES",
    "TERRARIUM_UNSUPPORTED",
    "TOOL_ENTRY_META",
    "WIRING_UNSUPPORTED",
]

# key → (the KohakuTerrarium feature, what to use in terrarium instead)
CREATURE_UNSUPPORTED: dict[str, tuple[str, str]] = {
    "system_prompt": ("inline `system_prompt`",
                      "a file named by `system_prompt_file` (`terrarium migrate` writes it)"),
    "prompt_context_files": ("`prompt_context_files`",
                             "`prompt_plugins` entries with `file:`, or `variables`"),
    "include_tools_in_prompt": ("`include_tools_in_prompt`",
                                "`skill_mode: dynamic` to keep the tool index short"),
    "include_hints_in_prompt": ("`include_hints_in_prompt`",
                                "`framework_hint_overrides` with '' to omit a hint block"),
    "max_messages": ("`max_messages`", "`history_turns: N`"),
    "ephemeral": ("`ephemeral`", "`history_turns: 0`"),
    "session_key": ("`session_key`", "the run log (`terrarium run --resume RUN_ID`)"),
    "subagents": ("sub-agents as a list (`subagents:`)",
                  "terrarium's `subagents: {name: creature config}`"),
    "max_subagent_depth": ("`max_subagent_depth` other than 1 to 8",
                           "`subagent_depth` from 1 to 8"),
    "triggers": ("triggers (`triggers:`)",
                 "terrarium's `triggers` (`type:` timer, cron, idle or startup)"),
    "compact": ("conversation compaction (`compact:`)",
                "`history_turns` and `controller.context_window` (old turns fold by themselves)"),
    "termination": ("`termination:`", "`terrarium run --max-turns N --timeout SECONDS`"),
    "plugins": ("lifecycle plugins (`plugins:`)",
                "terrarium's `plugins` (`module: package.module:Class`)"),
    "memory": ("embedding memory (`memory:`)",
               "`memory_record`, `memory_recall` and `memory_recent`"),
    "output_wiring": ("`output_wiring` in a creature config",
                      "`output_wiring` on the creature's entry in terrarium.yaml"),
    "disable_provider_tools": ("provider-native tools (`disable_provider_tools`)",
                               "nothing: terrarium injects no provider tools"),
    "sanitize_orphan_tool_calls": ("`sanitize_orphan_tool_calls`",
                                   "nothing: terrarium never sends unanswered tool calls"),
}

# KohakuTerrarium keys whose value here is what terrarium does anyway (most are KT's
# defaults, written out): read and dropped, not refused
KT_SAME_AS_TERRARIUM: dict[str, tuple[object, str]] = {
    "include_tools_in_prompt": (True, "terrarium's prompt always lists the tools"),
    "include_hints_in_prompt": (True, "terrarium's prompt always has the framework hints"),
    "sanitize_orphan_tool_calls": (True, "terrarium never sends unanswered tool calls"),
    "disable_provider_tools": ([], "terrarium injects no provider tools"),
    "ephemeral": (False, "terrarium keeps the conversation"),
    "max_messages": (0, "terrarium's history is bounded by the context window"),
}

CONTROLLER_UNSUPPORTED: dict[str, tuple[str, str]] = {
    "variation_selections": ("model variations (`controller.variation_selections`)",
                             "the option itself, e.g. `controller.reasoning_effort`"),
    "variation": ("model variations (`controller.variation`)",
                  "the option itself, e.g. `controller.reasoning_effort`"),
    "auth_mode": ("`controller.auth_mode`", "`controller.api_key_env`"),
    **{k: (f"`controller.{k}`", CREATURE_UNSUPPORTED[k][1])
       for k in ("max_messages", "ephemeral", "include_tools_in_prompt",
                 "include_hints_in_prompt")},
}
# KohakuTerrarium mirrors these creature keys inside `controller:`; they move up
CONTROLLER_MIRRORED = ("tool_format", "skill_mode")
# provider names KohakuTerrarium knows and terrarium does not
KT_PROVIDERS = ("openrouter", "anthropic", "codex", "codex-oauth", "gemini", "mimo", "litellm")

ENTRY_UNSUPPORTED: dict[str, tuple[str, str]] = {
    "output_log": ("`output_log`", "the run log (`terrarium log RUN_ID`)"),
    "output_log_size": ("`output_log_size`", "the run log (`terrarium log RUN_ID`)"),
}

# output_wiring entry keys terrarium does not have (validate and migrate say the same)
WIRING_UNSUPPORTED: dict[str, tuple[str, str]] = {
    "with_content": ("content-free output_wiring pings (`with_content: false`)",
                     "the monitor (`terrarium run --tui`), which shows every creature's state"),
    "prompt": ("output_wiring `prompt` templates", "`message_templates` on the receiving "
               "creature"),
}

TERRARIUM_UNSUPPORTED: dict[str, tuple[str, str]] = {  # keys of `terrarium:` itself
    "interface": ("`terrarium.interface`",
                  "`terrarium run` (`--tui` for the monitor) or the HTTP service"),
}

PACKAGE_UNSUPPORTED: dict[str, tuple[str, str]] = {
    "plugins": ("package plugins", "`prompt_plugins` in a creature"),
    "io": ("package input/output modules", "named outputs (`output.named_outputs`)"),
    "triggers": ("package triggers", "messages on a channel"),
    "commands": ("controller commands", "tools (`package.module:Class`)"),
    "user_commands": ("slash commands", "the `terrarium` command line"),
    "prompts": ("named prompt fragments (`prompts:`)",
                "`{% include \"FILE.md\" %}` of a file in the package's prompts/ folder "
                "(`terrarium migrate` rewrites the includes)"),
    "templates": ("named prompt fragments (`templates:`)",
                  "`{% include \"FILE.md\" %}` of a file in the package's prompts/ folder "
                  "(`terrarium migrate` rewrites the includes)"),
    "python_dependencies": ("`python_dependencies`", "pip-installing them yourself"),
}

OUTPUT_TYPE_UNSUPPORTED: dict[str, tuple[str, str]] = {
    "tui": ("the `tui` output", "`terrarium run --tui`"),
    "console_tts": ("the `console_tts` output", "a named output with `type: tts`"),
    "dummy_tts": ("the `dummy_tts` output", "a named output with `type: tts`"),
    "custom": ("custom output modules", "a named output of type tts, stdout or file"),
    "package": ("package output modules", "a named output of type tts, stdout or file"),
}
OUTPUT_TYPE_ALIASES = {"stdout": "stdout", "stdout_prefixed": "stdout"}

# KohakuTerrarium built-in tool → terrarium's tool of the same meaning (used when it exists)
KT_TOOL_ALIASES: dict[str, str] = {
    "read": "read_file",
    "write": "write_file",
    "bash": "shell",
    "search_memory": "memory_search",
}
# KohakuTerrarium's settings of any tool entry (its ToolConfig) that terrarium's tools lack
KT_TOOL_CONFIG_UNSUPPORTED: dict[str, tuple[str, str]] = {
    "working_dir": ("per-tool working folders (`working_dir`)",
                    "`workspace` (the creature's working folder)"),
    "env": ("per-tool environment variables (`env`)",
            "`tool_options.shell.pass_env` (variables passed on from terrarium's environment)"),
    "notify_controller_on_background_complete": (
        "`notify_controller_on_background_complete`",
        "`background` (calls that may run as background jobs, read with `wait` and "
        "`read_job`)"),
}
KT_TOOL_UNSUPPORTED: dict[str, str] = {  # KohakuTerrarium built-in → what to use instead
    "python": "`shell` running `python`",
    "notebook_read": "`read_file` on the .ipynb file",
    "notebook_edit": "`write_file` on the .ipynb file",
    "scratchpad": "`memory_write` and `memory_search`",
    "json_read": "`read_file`",
    "json_write": "`write_file`",
    "show_card": "a named output (`output.named_outputs`)",
    "delete_trigger": "`triggers` in the creature's config",
    "list_triggers": "`triggers` in the creature's config",
    "stop_task": "`max_iterations`",
    "web_search": "`web_fetch`",
    "watch_channel": "`channels.listen`",
    "add_timer": "messages on a channel",
    "add_schedule": "messages on a channel",
}
# KohakuTerrarium's call that sends on a channel named by its argument (terrarium: channel_call)
KT_CHANNEL_CALLS = ("send_channel", "send_message")
CHANNEL_CALL_REF = "\0channel_call"
# KohakuTerrarium built-ins of the same name and meaning as terrarium's (when it has them)
KT_TOOL_SAME = ("edit", "multi_edit", "glob", "grep", "tree", "info", "think", "ask_user",
                "web_fetch")
# the root creature always gets terrarium's team tools, so naming KohakuTerrarium's is harmless
ROOT_TEAM_TOOL_PREFIXES = ("terrarium_", "creature_", "group_")
TOOL_ENTRY_META = ("name", "type", "module", "class", "class_name", "description", "options",
                    "doc")
# KohakuTerrarium's built-in plugins, named without a module
KT_PLUGINS_UNSUPPORTED: dict[str, str] = {
    "sandbox": "`workspace`, `writable_paths` and `approve` (tools that wait for a human's yes)",
    "permgate": "`approve` (tools that wait for a human's yes)",
    "tool_guard": "`approve` (tools that wait for a human's yes)",
}
KT_PLUGIN_COMPACTION = ("auto-compact", "auto_compact", "compact")
KT_PLUGIN_BUDGET = ("budget", "budget_enforcer")
# KohakuTerrarium's MCP transports → terrarium's (None: not supported)
KT_MCP_TRANSPORTS = {"stdio": "stdio", "streamable_http": "http", "http": "http", "sse": None}
# KohakuTerrarium's framework-hint names → terrarium's (framework_hint_overrides, framework_hints)
KT_HINT_KEYS = {
    "framework.execution_model.dynamic": "execution_dynamic",
    "framework.execution_model.static": "execution_static",
    "framework.execution_model.native": "execution_native",
    "framework.output_model": "output_model",
}
