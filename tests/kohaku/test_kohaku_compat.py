"""KohakuTerrarium's config forms: accepted where the meaning matches, a located "not
supported" line where it does not, and ``terrarium migrate`` to a package that validates."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from terrarium.cli.command import main
from terrarium.config import Team, load_any, load_single_creature, load_team
from terrarium.config.kohaku_compat import CREATURE_UNSUPPORTED
from terrarium.llm.factory import make_model
from terrarium.llm.openai_client import OpenAIClient
from terrarium.llm.settings import ModelSettings
from tests.config_fixtures import errors_of, write
from tests.openai_fakes import FakeOpenAI, ok_stream, request

CORPUS = Path(__file__).parents[1] / "kohaku_corpus"
CASES = sorted(p.name for p in CORPUS.iterdir() if p.is_dir())
NOT_SUPPORTED = " is not supported here; use "




# -- the corpus -----------------------------------------------------------------------


@pytest.mark.parametrize("case", CASES)
def test_corpus_validates_or_fails_only_with_not_supported_lines(case: str) -> None:
    for line in errors_of(CORPUS / case):
        assert "KohakuTerrarium's " in line and NOT_SUPPORTED in line, line
        assert "\n" not in line  # one located line each


def test_corpus_has_a_creature_with_twenty_tools() -> None:
    import yaml

    cfg = yaml.safe_load((CORPUS / "solo_toolbox/config.yaml").read_text())
    assert len(cfg["tools"]) >= 20


@pytest.mark.parametrize("case", CASES)
def test_migrate_then_validate_exits_zero(case: str, tmp_path: Path,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / case
    assert main(["migrate", str(CORPUS / case), str(out)]) == 0
    report = (out / "MIGRATION.md").read_text()
    assert "## Dropped" in report and "`terrarium validate` passes (" in report
    assert main(["validate", str(out)]) == 0
    assert (CORPUS / case).is_dir()  # the source is left alone


def test_migrate_reports_every_dropped_feature(tmp_path: Path) -> None:
    main(["migrate", str(CORPUS / "solo_toolbox"), str(tmp_path / "o")])
    report = (tmp_path / "o/MIGRATION.md").read_text()
    for feature in ("sub-agents", "plugin 'some_pkg.plugins.CostMeter'", "`termination:`",
                    "'web_search'",
                    "MCP tool 'lookup'", "trigger tool 'add_timer'",
                    "`max_iterations: 300`"):
        assert feature in report
    assert "max_messages 30 is history_turns 30" in report
    assert "inline system_prompt written to prompts/system_inline.md" in report


def test_migrate_refuses_a_non_empty_target(tmp_path: Path) -> None:
    (tmp_path / "o").mkdir()
    (tmp_path / "o/x").write_text("x")
    assert main(["migrate", str(CORPUS / "lone_assistant"), str(tmp_path / "o")]) == 1


# -- forms accepted ---------------------------------------------------------------------


def test_package_terrarium_with_inline_overrides_and_root() -> None:
    team = load_team(CORPUS / "workshop/terrariums/review_desk")
    drafter = team.creatures["drafter"]
    assert drafter.inline and drafter.config.name == "drafter"
    # prompts joined along the chain: helper's, scribe's, then the terrarium's override
    assert [p.name for p in drafter.loaded.prompt_files] == ["system.md", "system.md",
                                                             "drafter.md"]
    text = drafter.loaded.persona_text() or ""
    assert text.index("careful helper") < text.index("write things down") < text.index("Draft")
    # prompt_mode: replace keeps only the entry's own file
    assert [p.name for p in team.creatures["checker"].loaded.prompt_files] == ["checker.md"]
    # tool mappings and KohakuTerrarium names, unioned along the chain
    assert drafter.config.tools == ["read_file", "write_file", "info", "memory_search",
                                    "memory_write"]
    # controller.tool_format moved up, the profile filled in under the creature's own keys
    ctl = drafter.config.controller
    assert drafter.config.tool_format == "native"
    assert ctl.provider == "openai" and ctl.model == "small-writer" and ctl.llm == "nearby"
    assert ctl.temperature == 0.6 and ctl.reasoning_effort == "medium"
    assert ctl.service_tier == "flex" and ctl.extra_headers == {"X-Team": "workshop"}
    # output.type shorthand → a default stdout output
    assert drafter.config.output.default == "stdout"
    # output_wiring to a creature → a queue channel named after it, which it hears
    assert team.channels["checker"].type == "queue"
    assert "checker" in team.creatures["checker"].listen
    assert drafter.output_wiring == ("checker",)
    # the root hears every channel, including its own direct one
    assert team.root is not None and set(team.root.listen) == set(team.channels)
    assert team.root.config.tools == ["read_file", "write_file", "info", "memory_search"]
    # package skills by `*`, described by SKILL.md front matter
    assert [Path(s).parent.name for s in drafter.config.skills] == ["tidy-notes"]


def test_validate_summary_says_which_prompt_mode(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["validate", str(CORPUS / "workshop/terrariums/review_desk")]) == 0
    out = capsys.readouterr().out
    assert "prompt_mode concat: joined along base_config" in out
    assert "prompt_mode replace: own file" in out
    assert "endpoint: openai-compatible http://127.0.0.1:9/v1 model=small-writer" in out


def test_skill_folder_and_description(tmp_path: Path) -> None:
    from terrarium.config.creature import parse_skill

    shutil.copytree(CORPUS / "lone_assistant", tmp_path / "a")
    (tmp_path / "a/config.yaml").write_text(
        (tmp_path / "a/config.yaml").read_text().replace("ephemeral: true\n", ""))
    team = load_single_creature(tmp_path / "a")
    (skill,) = team.creatures["lone_assistant"].config.skills
    doc = parse_skill(Path(skill))
    assert doc.name == "greeting" and doc.summary == "Greet the user by name."


def test_agent_name_in_a_persona(tmp_path: Path) -> None:
    from terrarium.controller.assembly import assemble
    from terrarium.prompt.builder import PromptBuilder
    from terrarium.prompt.tail import TailState

    team = load_team(CORPUS / "workshop/terrariums/review_desk")
    parts = assemble(team, "drafter")
    built = PromptBuilder(parts.inputs, parts.fmt).build(TailState(step=0))
    assert "You are drafter, a careful helper." in built.prefix


def test_env_substitution_and_located_error(tmp_path: Path,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    write(tmp_path, {"c/config.yaml": "name: c\nmax_iterations: ${ITER:3}\ncontroller:\n"
                                      "  base_url: ${URL}\n"})
    monkeypatch.delenv("URL", raising=False)
    (line,) = errors_of(tmp_path / "c")
    assert "config.yaml:4:13: controller.base_url: environment variable URL is not set" in line
    monkeypatch.setenv("URL", "http://127.0.0.1:5/v1")
    monkeypatch.setenv("ITER", "7")
    cfg = load_single_creature(tmp_path / "c").creatures["c"].config
    assert cfg.max_iterations == 7 and cfg.controller.base_url == "http://127.0.0.1:5/v1"


def test_no_inherit_and_unknown_keys_stay_errors(tmp_path: Path) -> None:
    write(tmp_path, {
        "base/config.yaml": "name: base\ntools: [info]\n",
        "kid/config.yaml": "name: kid\nbase_config: ../base\nno_inherit: [tools]\n"
                           "tools: [memory_search]\n",
        "bad/config.yaml": "name: bad\ntool_fromat: xml\n",
    })
    assert load_single_creature(tmp_path / "kid").creatures["kid"].config.tools == [
        "memory_search"]
    (line,) = errors_of(tmp_path / "bad")
    assert "unknown key 'tool_fromat'" in line and "did you mean 'tool_format'" in line


def test_every_table_entry_is_a_located_not_supported_line(tmp_path: Path) -> None:
    # 99: a value none of them reads as terrarium's own (max_subagent_depth 1 to 8 would be)
    body = "".join(f"{k}: 99\n" for k in CREATURE_UNSUPPORTED)
    write(tmp_path, {"c/config.yaml": "name: c\n" + body})
    lines = errors_of(tmp_path / "c")
    assert len(lines) == len(CREATURE_UNSUPPORTED)
    for key, line in zip(CREATURE_UNSUPPORTED, sorted(lines, key=lambda s: int(
            s.split(":")[1])), strict=True):
        assert f": {key}: KohakuTerrarium's" in line and NOT_SUPPORTED in line


def test_package_metadata_and_list_entries(tmp_path: Path) -> None:
    write(tmp_path, {
        "kohaku.yaml": 'name: p\nversion: "1.2.0"\nauthor: me\nrepository: https://x\n'
                       "creatures:\n  - name: one\n  - {name: two, path: elsewhere/two}\n"
                       "plugins:\n  - {name: x, module: m, class: C}\n",
        "creatures/one/config.yaml": "name: one\n",
        "elsewhere/two/config.yaml": "name: two\n",
    })
    (line,) = errors_of(tmp_path)
    assert "kohaku.yaml:8:1: plugins: KohakuTerrarium's package plugins" in line
    (tmp_path / "kohaku.yaml").write_text(
        (tmp_path / "kohaku.yaml").read_text().split("plugins:")[0])
    index, _ = load_any(tmp_path)  # type: ignore[misc]
    assert index.packages["p"].manifest.creatures == ["creatures/one", "elsewhere/two"]


def test_terrarium_is_a_team_after_migrate(tmp_path: Path) -> None:
    main(["migrate", str(CORPUS / "relay_team"), str(tmp_path / "r")])
    team = load_any(tmp_path / "r")
    assert isinstance(team, Team) and "baton_pass" in team.channels
    persona = team.creatures["last_leg"].loaded.persona_text() or ""
    assert persona.index("one leg") < persona.index("finish the relay")


# -- the model a creature runs on --------------------------------------------------------


def test_base_url_without_provider_is_openai() -> None:
    assert ModelSettings(base_url="http://h/v1").provider == "openai"
    assert ModelSettings(api_key_env="K").provider == "openai"
    assert ModelSettings().provider == "embedded"
    assert ModelSettings(provider="embedded", base_url="http://h/v1").provider == "embedded"


@pytest.mark.anyio
async def test_creature_with_base_url_is_served_by_the_openai_client(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    async with FakeOpenAI([ok_stream("hello", " there")]) as srv:
        write(tmp_path, {"c/config.yaml":
                         f"name: c\ncontroller:\n  base_url: {srv.base_url}\n  model: m7\n"
                         "  api_key_env: C_KEY\n  reasoning_effort: high\n"
                         "  service_tier: flex\n  extra_body: {top_k: 5}\n"
                         "  extra_headers: {X-Trace: '${TRACE_ID}'}\n"})
        monkeypatch.setenv("TRACE_ID", "trace-42")
        monkeypatch.setenv("C_KEY", "sk-abc")
        cdef = load_single_creature(tmp_path / "c").creatures["c"]
        model = make_model(cdef.config.controller, embedded=None)
        assert isinstance(model, OpenAIClient)
        text = "".join([d.text async for d in model.stream(request())])
    assert text == "hello there"
    (seen,) = srv.seen
    assert seen.body["model"] == "m7" and seen.body["reasoning_effort"] == "high"
    assert seen.body["service_tier"] == "flex" and seen.body["top_k"] == 5
    assert seen.headers["x-trace"] == "trace-42"
    assert seen.headers["authorization"] == "Bearer sk-abc"


def test_unknown_profile_is_located(tmp_path: Path) -> None:
    write(tmp_path, {"kohaku.yaml": "name: p\nllm_profiles:\n  fast: {base_url: http://h/v1}\n",
                     "c/config.yaml": "name: c\ncontroller:\n  llm: fsat\n"})
    (line,) = errors_of(tmp_path / "c")
    assert "c/config.yaml:3:3: controller.llm: unknown model profile or preset 'fsat'" in line
    assert "did you mean 'fast'" in line


def test_mcp_servers_list_form_becomes_the_mapping(tmp_path: Path) -> None:
    write(tmp_path, {"config.yaml": (
        "name: lister\n"
        "mcp_servers:\n"
        "  - name: files\n"
        "    transport: stdio\n"
        "    command: sh\n"
        "    args: [-c, 'exit 0']\n"
        "    connect_timeout: 5\n"
        "  - name: docs\n"
        "    transport: streamable_http\n"
        "    url: http://127.0.0.1:9/mcp\n")})
    team = load_single_creature(tmp_path)
    servers = next(iter(team.creatures.values())).config.mcp_servers
    assert sorted(servers) == ["docs", "files"]
    assert servers["files"].kind == "stdio" and servers["files"].startup_timeout == 5
    assert servers["docs"].kind == "http"


def test_mcp_sse_transport_is_a_not_supported_line(tmp_path: Path) -> None:
    write(tmp_path, {"config.yaml": (
        "name: lister\nmcp_servers:\n  - name: old\n    transport: sse\n"
        "    url: http://127.0.0.1:9/sse\n")})
    lines = errors_of(tmp_path)
    assert len(lines) == 1 and "MCP transport 'sse'" in lines[0] and NOT_SUPPORTED in lines[0]
    assert "config.yaml:4" in lines[0]


# -- max_iterations: terrarium's meaning where it is the same, "not supported" elsewhere ----


@pytest.mark.parametrize(("value", "kept"), [("6", 6), ("100", 100), ("300", None),
                                             ("0", None), ("null", None)])
def test_max_iterations_is_terrariums_only_in_its_range(tmp_path: Path, value: str,
                                                        kept: int | None) -> None:
    write(tmp_path, {"c/config.yaml": f"name: c\nmax_iterations: {value}\n"})
    lines = errors_of(tmp_path / "c")
    if kept is not None:
        assert lines == []
        assert load_single_creature(tmp_path / "c").creatures["c"].config.max_iterations == kept
    else:
        (line,) = lines
        assert "config.yaml:2:1: max_iterations: KohakuTerrarium's" in line
        assert NOT_SUPPORTED in line and "--max-turns" in line
        assert "less than or equal" not in line
