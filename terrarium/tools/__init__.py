"""Tools: the contract, the built-ins, the registry, and a runner that never raises.

Why one package: a tool's single definition (name, argument model, docs, guidance) feeds
the prompt, the call parsers, the grammar and the controller loop, so they cannot drift.
This ``__init__`` imports nothing, so ``terrarium.tools.base`` stays cheap to import.

Modules
    ``base``      ``Tool``, ``ToolContext``, ``NoArgs``, ``GuidanceBucket`` (the contract).
    ``registry``  ``ToolRegistry``, ``BUILTIN_TOOLS``, ``resolve_tool``, ``known_tool_names``.
    ``runner``    ``run_tool(tool, args, ctx) -> ToolResult(ok, text)``.
    ``state``     keys of ``ToolContext.state`` the built-ins read, with typed accessors.
    ``info``      ``InfoTool`` (``info``).
    ``memory``    ``MemoryWriteTool`` (``memory_write``), ``MemorySearchTool`` (``memory_search``).
    ``files``     ``ReadFileTool`` (``read_file``, line ranges), ``WriteFileTool`` (``write_file``).
    ``edits``     ``EditTool`` (``edit``), ``MultiEditTool`` (``multi_edit``).
    ``find``      ``GlobTool`` (``glob``).   ``grep``  ``GrepTool`` (``grep``; rg or Python).
    ``tree``      ``TreeTool`` (``tree``).   ``walk``  the gitignore-aware walk they share.
    ``shell``     ``ShellTool`` (``shell``).  ``web``  ``WebFetchTool`` (``web_fetch``, SSRF).
    ``think``     ``ThinkTool`` (``think``).  ``ask``  ``AskUserTool`` (``ask_user``).
    ``approval``  ``Approver``/``Approval``: who says yes to calls a creature's ``approve`` lists.
    ``confine``   the path-confinement rule the file tools share.
    ``workspace`` the workspace the file and shell tools act in (``ToolContext.workspace``).
    ``mcp``       (a package) MCP servers' tools as Tool classes: ``McpConnections``,
                  ``McpConnection``, the JSON-schema → args-model conversion (see its ``__init__``).

Writing a tool
    Subclass ``Tool``; set ``name``, ``summary`` (one line for the prompt index),
    ``documentation`` (what ``info`` shows after the summary), ``args_model`` (a pydantic
    model with ``extra="forbid"``; field descriptions become the argument docs), optionally
    ``guidance`` and ``guidance_bucket``, and ``concurrency_safe = True`` only if two calls
    may run at once without harm (read-only tools). Implement ``async def run(self, args,
    ctx) -> str``; refuse bad input by raising ``terrarium.errors.ToolError`` with a
    sentence the model can act on. Blocking I/O belongs in ``anyio.to_thread.run_sync``.
    A creature names the tool in ``tools:`` as ``module:ClassName``: a module file in the
    creature's folder, else an importable module (``package.module:ClassName``).

Wiring a creature (what the controller does)
    ::

        registry = ToolRegistry.from_refs(["info", "read_file", "my.pkg:Tool"], owner=path)
        ctx = ToolContext(creature="router", cwd=root, readable=(root,), writable=(out,),
                          state={STATE_TOOLS: registry, STATE_MEMORY: store})
        result = await run_tool(registry.get(call.name), call.raw_args, ctx)
        # result.ok False: result.text says what went wrong, for the model to read

    ``ToolContext`` fields besides ``state``: ``workspace`` (declared workspace or None:
    then the workspace tools use ``cwd``), ``tool_options`` (tool name -> the creature's
    ``tool_options`` entry, read through ``Tool.options(ctx)`` and the tool's
    ``options_model``), ``answerer`` (an ``Answerer`` for ``ask_user``; None: nobody there).

    ``ToolContext.state`` keys (constants in ``state``): ``"tools"`` → the creature's
    ``ToolRegistry`` (needed by ``info``); ``"memory"`` → a ``terrarium.store.MemoryStore``
    (needed by the memory tools); ``"memory_shared"`` → ``True`` to let ``memory_search``
    see every creature's facts instead of only the caller's.

File confinement
    Relative paths resolve against ``ctx.cwd``; any ``..`` component is refused; the path is
    resolved through symlinks and must lie inside a resolved root of ``ctx.readable``
    (``read_file``; writable roots count as readable) or ``ctx.writable`` (``write_file``).
    A symlink inside a root that leads outside is refused; one that stays inside works.
"""


__all__: list[str] = []
