"""MCP servers as creature tools, against a real MCP server the tests start.

The server is ``tests/mcp_fixtures/server.py`` (the SDK's MCPServer, once FastMCP), run as a
subprocess over stdio (or in-process over streamable HTTP on 127.0.0.1). Each test connects
the creature's servers with ``connect_mcp`` inside an ``McpConnections`` exactly as the runtime
does, assembles the creature with the tools it got, and drives a real ``Controller`` on the
scripted model: the call goes through the format's parser, the args model built from the
tool's JSON schema, the grammar, the server, and back as a tool result.
"""

from __future__ import annotations

import os
import socket
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
import yaml

from terrarium.cli.command import main
from terrarium.config import Team, load_single_creature
from terrarium.controller.assembly import assemble
from terrarium.controller.loop import Controller, Incoming, TurnResult
from terrarium.controller.mcp import connect_mcp, mcp_params
from terrarium.errors import ConfigErrors
from terrarium.formats import get_format, grammar_for
from terrarium.llm.scripted import ScriptedModel
from terrarium.tools.mcp.connections import McpConnections
from terrarium.tools.mcp.params import HttpParams
from tests.gbnf_engine import accepts, read_gbnf

SERVER = Path(__file__).parents[1] / "mcp_fixtures" / "server.py"


def stdio_server(**env: str) -> dict[str, Any]:
    spec: dict[str, Any] = {"command": sys.executable, "args": [str(SERVER)]}
    if env:
        spec["env"] = env
    return spec


def write_creature(tmp_path: Path, *, fmt: str = "bracket",
                   servers: dict[str, Any] | None = None, **config: Any) -> Path:
    folder = tmp_path / "solo"
    folder.mkdir(exist_ok=True)
    body = {"name": "solo", "controller": {"provider": "scripted", "script": "script.yaml"},
            "tool_format": fmt, "tools": ["info", "think"],
            "mcp_servers": servers if servers is not None else {"fix": stdio_server()},
            **config}
    (folder / "config.yaml").write_text(yaml.safe_dump(body, sort_keys=False), "utf-8")
    (folder / "script.yaml").write_text("steps: []\n", encoding="utf-8")
    return folder


async def run_turns(team: Team, model: ScriptedModel, texts: list[str],
                    **hub_options: Any) -> tuple[list[TurnResult], Controller]:
    """Connect the servers, assemble, and run one turn per text on one controller."""
    async with McpConnections(**hub_options) as hub:
        with anyio.fail_after(60):
            extra = await connect_mcp(team, hub)
        parts = assemble(team, "solo", extra_tools=extra.get("solo", ()))
        ctl = Controller(parts, model)
        results = []
        for text in texts:
            with anyio.fail_after(60):
                results.append(await ctl.run_turn([Incoming(text=text)]))
        return results, ctl


def last_user(model: ScriptedModel, i: int) -> str:
    return next(m.content or "" for m in reversed(model.requests[i].messages)
                if m.role in ("user", "tool"))


def call_text(team: Team, name: str, /, **args: Any) -> str:
    """The call as the creature's format writes it (bracket or xml; arguments in order)."""
    return get_format(team.creatures["solo"].config.tool_format, []).render_call(name, args)


# -- the three formats -------------------------------------------------------------------


@pytest.mark.parametrize("fmt", ["bracket", "xml"])
def test_text_format_call_reaches_the_server_and_the_result_comes_back(
        tmp_path: Path, fmt: str) -> None:
    team = load_single_creature(write_creature(tmp_path, fmt=fmt))
    search = call_text(team, "fix__search", query="a", limit=1, order="desc")
    pixel = call_text(team, "fix__pixel", label="dot")
    model = ScriptedModel([
        {"match": "fruit", "reply": "Looking.\n" + search},
        {"match": "Result of fix__search", "reply": pixel},
        {"match": "Result of fix__pixel", "reply": "An avocado, and a dot."},
    ])
    [result], ctl = anyio.run(run_turns, team, model, ["Which fruit starts with a?"])
    assert [(c.name, c.ok) for c in result.calls] == [("fix__search", True), ("fix__pixel", True)]
    assert result.calls[0].result == "avocado: a green fruit"
    assert "Result of fix__search: avocado: a green fruit" in last_user(model, 1)
    # an image comes back as a readable note, its caption as text
    assert result.calls[1].result == "caption: dot\n[image image/png, 70 bytes: not shown to you]"
    assert result.text.endswith("An avocado, and a dot.")
    # documented like any tool: in the prompt's index, grouped by the server's prefix
    prompt = "\n".join(m.content or "" for m in model.requests[0].messages)
    assert "- fix__search: Search the catalogue by name prefix." in prompt
    assert "- fix__crash: Kill this server process" in prompt
    # constrained by the grammar: the calls the model wrote are accepted, a bad enum is not
    rules = read_gbnf(grammar_for(ctl.parts.fmt))
    assert accepts(rules, "Looking.\n" + search)
    assert not accepts(rules, call_text(team, "fix__search", query="a", order="sideways"))


def test_native_call_reaches_the_server(tmp_path: Path) -> None:
    team = load_single_creature(write_creature(tmp_path, fmt="native"))
    model = ScriptedModel([
        {"match": "rock", "tool_calls": [
            {"name": "fix__search", "arguments": {"query": "ba", "exact": False}},
            {"name": "fix__tag", "arguments": {"items": ["x", "y"], "meta": {"n": 2}}}]},
        {"match": "Result", "reply": "Basalt is a rock."},
    ])
    [result], _ = anyio.run(run_turns, team, model, ["Which rock?"])
    assert [(c.name, c.ok, c.result) for c in result.calls] == [
        ("fix__search", True, "banana: a yellow fruit; basalt: a dark rock"),
        ("fix__tag", True, "x,y [('n', 2)]"),
    ]
    # the API got the tool's JSON schema, enum and bounds included
    tools = {t["function"]["name"]: t["function"] for t in model.requests[0].tools or []}
    params = tools["fix__search"]["parameters"]
    assert params["required"] == ["query"]
    assert params["properties"]["order"]["enum"] == ["asc", "desc"]
    assert params["properties"]["limit"]["maximum"] == 10
    assert tools["fix__search"]["description"] == "Search the catalogue by name prefix."


def test_arguments_are_validated_before_the_call(tmp_path: Path) -> None:
    team = load_single_creature(write_creature(tmp_path, fmt="native"))
    model = ScriptedModel([
        {"match": "go", "tool_calls": [
            {"name": "fix__search", "arguments": {"query": "a", "order": "sideways"}},
            {"name": "fix__search", "arguments": {"query": "a", "limit": 99}},
            {"name": "fix__search", "arguments": {"limit": 2}}]},
        {"match": "", "reply": "ok"},
    ])
    [result], _ = anyio.run(run_turns, team, model, ["go"])
    assert [c.ok for c in result.calls] == [False, False, False]
    assert "'asc', 'desc'" in result.calls[0].result
    assert "less than or equal to 10" in result.calls[1].result
    assert "'query'" in result.calls[2].result and "required" in result.calls[2].result


def test_embedded_resource_and_info_docs(tmp_path: Path) -> None:
    team = load_single_creature(write_creature(tmp_path))
    model = ScriptedModel([
        {"match": "readme", "reply": call_text(team, "fix__readme")},
        {"match": "Result of fix__readme", "reply": call_text(team, "info", name="fix__search")},
        {"match": "Result of info", "reply": "done"},
    ])
    [result], _ = anyio.run(run_turns, team, model, ["show the readme"])
    assert result.calls[0].result == (
        "[resource fixture://readme (text/plain)]\nThe catalogue lists things.")
    doc = result.calls[1].result
    assert doc.startswith("fix__search: Search the catalogue by name prefix.")
    assert "Tool 'search' of the MCP server 'fix'" in doc
    assert "- order (typing.Literal['asc', 'desc'], optional, default 'asc') — sort order" in doc
    assert "- query (str, required) — letters the names start with" in doc


# -- a server that dies, a server that does not start --------------------------------------


def test_server_dying_mid_run_is_a_tool_error_then_it_is_back(tmp_path: Path) -> None:
    team = load_single_creature(write_creature(tmp_path))
    model = ScriptedModel([
        {"match": "crash", "reply": call_text(team, "fix__crash")},
        {"match": "Result of fix__crash", "reply": "It went away."},
        {"match": "again", "reply": call_text(team, "fix__search", query="app")},
        {"match": "Result of fix__search", "reply": "Back."},
    ])
    (first, second), ctl = anyio.run(
        # the second call waits for the restarted server itself (a Python process whose
        # start takes seconds on a loaded machine), not the default 5 s
        lambda: run_turns(team, model, ["crash it", "again please"], backoff=(0.05,),
                          reconnect_wait=60.0))
    assert [c.ok for c in first.calls] == [False]
    assert "went away during crash" in first.calls[0].result
    assert first.text == "It went away."
    assert [(c.ok, c.result) for c in second.calls] == [(True, "apple: a red fruit")]
    conn = ctl.parts.registry.get("fix__search").connection  # type: ignore[attr-defined]
    assert conn.connects == 2


def test_server_that_fails_to_start_names_its_config_line(tmp_path: Path) -> None:
    servers = {"good": stdio_server(), "fix": stdio_server(MCP_FIXTURE_FAIL="1")}
    team = load_single_creature(write_creature(tmp_path, servers=servers))

    async def go() -> None:
        async with McpConnections() as hub:
            with anyio.fail_after(60):
                await connect_mcp(team, hub)

    with pytest.raises(ConfigErrors) as info:
        anyio.run(go)
    [err] = info.value.errors
    assert err.location is not None and err.location.file == tmp_path / "solo" / "config.yaml"
    text = (tmp_path / "solo" / "config.yaml").read_text().splitlines()
    assert text[err.location.line - 1].strip() == "fix:"
    assert "MCP server 'fix' of creature 'solo' did not start" in err.message
    assert "refusing to start (MCP_FIXTURE_FAIL)" in err.message  # its stderr, quoted


def test_missing_command_is_a_located_validate_error(tmp_path: Path) -> None:
    servers = {"gone": {"command": "no-such-mcp-server-xyz"},
               "web": {"url": "http://127.0.0.1:9/mcp",
                       "headers": {"Authorization": {"env": "H10_UNSET_TOKEN",
                                                     "prefix": "Bearer "}}}}
    folder = write_creature(tmp_path, servers=servers)
    with pytest.raises(ConfigErrors) as info:
        load_single_creature(folder)
    rendered = info.value.render()
    lines = (folder / "config.yaml").read_text().splitlines()
    by_msg = {e.message: e for e in info.value.errors}
    gone = next(e for m, e in by_msg.items() if "command not found" in m)
    assert lines[gone.location.line - 1].strip() == "command: no-such-mcp-server-xyz"
    token = next(e for m, e in by_msg.items() if "H10_UNSET_TOKEN" in m)
    assert lines[token.location.line - 1].strip().startswith("Authorization:")
    assert "export H10_UNSET_TOKEN=" in rendered


def test_bad_server_shapes_are_config_errors(tmp_path: Path) -> None:
    servers = {"ftp": {"url": "ftp://x"}, "extra": {"command": sys.executable, "argz": []}}
    with pytest.raises(ConfigErrors) as info:
        load_single_creature(write_creature(tmp_path, servers=servers))
    rendered = info.value.render()
    assert len(info.value.errors) == 2, rendered
    assert "mcp_servers.extra.argz: unknown key 'argz'\n  hint: did you mean 'args'?" in rendered
    assert "mcp_servers.ftp.url: string should match pattern" in rendered
    servers = {"both": {"url": "http://x/mcp", "command": sys.executable},
               "neither": {"args": ["x"]},
               "mixed": {"url": "http://x/mcp", "env": {"A": "b"}}}
    with pytest.raises(ConfigErrors) as info:
        load_single_creature(write_creature(tmp_path, servers=servers))
    messages = sorted(e.message for e in info.value.errors)
    assert messages == [
        "MCP server 'both' needs exactly one of `command` (a program started over stdio) "
        "or `url` (streamable HTTP)",
        "MCP server 'mixed': `env` is for stdio servers, and this one is an HTTP server",
        "MCP server 'neither' needs exactly one of `command` (a program started over stdio) "
        "or `url` (streamable HTTP)",
    ]


def test_server_names_must_be_names(tmp_path: Path) -> None:
    with pytest.raises(ConfigErrors) as info:
        load_single_creature(write_creature(tmp_path, servers={"bad name": stdio_server()}))
    assert "MCP server name 'bad name' must start with a letter" in info.value.render()


def test_header_values_come_from_the_environment(tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("H10_TOKEN", "s3cret")
    servers = {"web": {"url": "http://127.0.0.1:9/mcp", "headers": {
        "Authorization": {"env": "H10_TOKEN", "prefix": "Bearer "}, "X-Plain": "yes"}}}
    team = load_single_creature(write_creature(tmp_path, servers=servers))
    params = mcp_params(team.creatures["solo"])["web"]
    assert params == HttpParams("http://127.0.0.1:9/mcp",
                                {"Authorization": "Bearer s3cret", "X-Plain": "yes"})
    assert "s3cret" not in (tmp_path / "solo" / "config.yaml").read_text()


# -- streamable HTTP, in-process ----------------------------------------------------------


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_streamable_http_server_with_a_header_from_the_environment(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import uvicorn

    from tests.mcp_fixtures.server import build_server

    monkeypatch.setenv("H10_HTTP_TOKEN", "tok-123")
    port = free_port()
    app = build_server().streamable_http_app(host="127.0.0.1")
    seen: list[str] = []

    async def guarded(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            headers = dict(scope["headers"])
            seen.append(headers.get(b"authorization", b"").decode())
            if headers.get(b"authorization") != b"Bearer tok-123":
                await send({"type": "http.response.start", "status": 401, "headers": []})
                await send({"type": "http.response.body", "body": b""})
                return
        await app(scope, receive, send)

    servers = {"web": {"url": f"http://127.0.0.1:{port}/mcp", "headers": {
        "Authorization": {"env": "H10_HTTP_TOKEN", "prefix": "Bearer "}}}}
    team = load_single_creature(write_creature(tmp_path, servers=servers))
    model = ScriptedModel([
        {"match": "fruit", "reply": call_text(team, "web__search", query="b", limit=1)},
        {"match": "Result", "reply": "done"},
    ])

    async def go() -> TurnResult:
        server = uvicorn.Server(uvicorn.Config(guarded, host="127.0.0.1", port=port,
                                               log_level="warning", lifespan="on"))
        async with anyio.create_task_group() as tg:
            tg.start_soon(server.serve)
            for _ in range(500):  # uvicorn says it is up by a flag, not an event
                if server.started:
                    break
                await anyio.sleep(0.02)
            try:
                [result], _ = await run_turns(team, model, ["a fruit with b"])
            finally:
                server.should_exit = True
        return result

    result = anyio.run(go)
    assert [(c.name, c.ok, c.result) for c in result.calls] == [
        ("web__search", True, "banana: a yellow fruit")]
    assert seen and set(seen) == {"Bearer tok-123"}


# -- terrarium tools ------------------------------------------------------------------------


def test_tools_command_lists_every_tool_with_its_source(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = write_creature(tmp_path, tools=["info", "tests.runtime_fixtures.tools:Lookup"])
    assert main(["tools", str(folder), "solo"]) == 0
    out = capsys.readouterr().out
    assert "creature 'solo'" in out and "1 MCP server" in out
    rows = {line.split()[0]: line for line in out.splitlines()[1:]}
    assert "built-in" in rows["info"]
    assert "python: tests.runtime_fixtures.tools:Lookup" in rows["lookup"]
    assert "mcp: fix" in rows["fix__search"]
    assert "Search the catalogue by name prefix." in rows["fix__search"]
    assert {"fix__crash", "fix__pixel", "fix__readme", "fix__tag"} <= set(rows)


def test_tools_command_reports_a_server_that_fails(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = write_creature(tmp_path, servers={"fix": stdio_server(MCP_FIXTURE_FAIL="1")})
    assert main(["tools", str(folder), "solo"]) == 2
    captured = capsys.readouterr()
    assert "think" in captured.out and "fix__search" not in captured.out
    assert "MCP server 'fix' of creature 'solo' did not start" in captured.err
    assert "config.yaml:" in captured.err


# -- the example -----------------------------------------------------------------------------


def test_mcp_catalogue_example_runs_on_the_scripted_model(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The example's `command: python` is this interpreter, as in an activated venv."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    wrapper = bin_dir / "python"  # a symlink would lose the venv (found beside the link)
    wrapper.write_text(f'#!/bin/sh\nexec "{sys.executable}" "$@"\n', encoding="utf-8")
    wrapper.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}:{os.environ['PATH']}")
    example = Path(__file__).parents[2] / "examples" / "mcp_catalogue"
    team = load_single_creature(example)
    model = ScriptedModel.from_file(example / "script.yaml")

    async def go() -> TurnResult:
        async with McpConnections() as hub:
            with anyio.fail_after(60):
                extra = await connect_mcp(team, hub)
            parts = assemble(team, "catalogue", extra_tools=extra["catalogue"])
            with anyio.fail_after(60):
                return await Controller(parts, model).run_turn(
                    [Incoming(text="Which fruits start with a?")])

    result = anyio.run(go)
    assert [(c.name, c.ok, c.result) for c in result.calls] == [
        ("catalogue__search", True, "apple: a crisp red fruit\navocado: a creamy green fruit")]
    assert result.text.endswith("Two fruits start with a: apple and avocado.")


def test_team_runtime_connects_mcp_servers_before_assembly(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`terrarium.run` (TeamRuntime) starts the creature's MCP server, lists its tools with
    the others, and the scripted model's call reaches the real server."""
    import terrarium

    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    wrapper = bin_dir / "python"
    wrapper.write_text(f'#!/bin/sh\nexec "{sys.executable}" "$@"\n', encoding="utf-8")
    wrapper.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}:{os.environ['PATH']}")
    example = Path(__file__).parents[2] / "examples" / "mcp_catalogue"
    opts = terrarium.RuntimeOptions(runs_dir=tmp_path / "runs", audio="none", warm_up=False)

    async def go() -> terrarium.RunReport:
        with anyio.fail_after(90):
            return await terrarium.run(example, ["Which fruits start with a?"], options=opts)

    report = anyio.run(go)
    [(name, result)] = report.turns
    assert name == "catalogue"
    assert [(c.name, c.ok) for c in result.calls] == [("catalogue__search", True)]
    assert "apple" in result.calls[0].result
