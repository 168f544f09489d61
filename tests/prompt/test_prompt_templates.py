"""Strict sandboxed persona templates and one-owner registries."""

from __future__ import annotations

from pathlib import Path

import pytest

from terrarium.errors import RegistryError, TemplateError
from terrarium.prompt import PromptBuilder, Skill, StaticPlugin, TailState, Turn, VariableTable
from terrarium.prompt.inputs import ChannelView

try:
    from golden.prompt_inputs import CHANNELS, TOOLS, FakeFormat, SearchTool, make_inputs
except ImportError:  # pragma: no cover
    from tests.golden.prompt_inputs import CHANNELS, TOOLS, FakeFormat, SearchTool, make_inputs

PERSONA_FILE = Path("creatures/x/prompts/system.md")


def build(source: str, **over: object) -> PromptBuilder:
    return PromptBuilder(
        make_inputs(persona_source=source, persona_file=PERSONA_FILE, **over), FakeFormat()
    )


def test_syntax_error_names_file_and_line() -> None:
    with pytest.raises(TemplateError) as info:
        build("line one\nline two\n{% for x in tools %}\nno end\n")
    err = info.value
    assert err.file == PERSONA_FILE and err.line >= 3
    assert "syntax error" in str(err) and str(PERSONA_FILE) in str(err)


def test_unknown_variable_fails_at_construction_with_file_line_and_registered_list() -> None:
    with pytest.raises(TemplateError) as info:
        build("Hello {{ creature }}\n\nYou have {{ tool_count }} tools.\n")
    err = info.value
    assert err.file == PERSONA_FILE and err.line == 3
    text = str(err)
    assert "'tool_count'" in text
    for registered in ("creature", "model", "cwd", "tools", "channels", "team", "skills"):
        assert registered in text


def test_unknown_variable_in_untaken_branch_still_fails() -> None:
    with pytest.raises(TemplateError, match="'nope'"):
        build("{% if false %}{{ nope }}{% endif %}ok")


def test_undefined_attribute_fails_at_construction_with_line() -> None:
    with pytest.raises(TemplateError) as info:
        build("a\nb\n{{ creature.nonexistent }}\n")
    assert info.value.line == 3 and "nonexistent" in str(info.value)


def test_literal_braces_and_verbatim_text() -> None:
    b = build("Use {{ '{{' }} and {{ '}}' }} literally.  \n\n\nTrailing kept.\n\n")
    assert b.prefix.startswith("Use {{ and }} literally.  \n\n\nTrailing kept.\n\n")


def test_registered_variables_render() -> None:
    b = build(
        "{{ creature }}|{{ model }}|{{ cwd }}|{{ tools|map(attribute='name')|join(',') }}|"
        "{{ channels|length }}|{{ skills[0].name }}|{{ team|length }}|{{ extra }}",
        extra_variables={"extra": "E"},
    )
    first = b.prefix.splitlines()[0]
    assert first == "router|smollm2-135m|/srv/terrarium|clock,info,search,write_note|4|greeting|3|E"


@pytest.mark.parametrize(
    "source",
    [
        "{{ ''.__class__.__mro__ }}",
        "{{ cycler.__init__.__globals__ }}",
        "{{ creature.__class__ }}",
        "{{ creature['__class__'] }}",
        "{{ creature|attr('__class__') }}",
        "{{ lipsum.__globals__['os'] }}",
        "{% set x = creature.__class__ %}{{ x }}",
        "{{ tools[0].__init__ }}",
    ],
)
def test_sandbox_escapes_are_refused(source: str) -> None:
    with pytest.raises(TemplateError) as info:
        build(source)
    assert info.value.file == PERSONA_FILE


def test_unsafe_call_at_render_is_refused() -> None:
    # Sandbox-level refusal for what static checks cannot see (format-string tricks).
    with pytest.raises(TemplateError):
        build("{{ '{0.__class__}'.format(creature) }}")


def test_no_implicit_globals() -> None:
    with pytest.raises(TemplateError, match="'cycler'"):
        build("{{ cycler }}")
    assert build("{% for i in range(3) %}{{ i }}{% endfor %}").prefix.startswith("012")


def test_base_prompt_verbatim_across_steps() -> None:
    b = build("Persona {{ creature }}.\n")
    persona = b.prefix_texts["persona"]
    for step in range(5):
        built = b.build(TailState(step=step, conversation=[Turn("user", "x" * step)]))
        assert built.prefix.startswith(persona)
        assert built.prefix_texts["persona"] == persona


# -- registries ---------------------------------------------------------------------------


def test_variable_registry_refuses_second_owner() -> None:
    reg = VariableTable()
    reg.register("model", "a", "controller")
    with pytest.raises(RegistryError) as info:
        reg.register("model", "b", "plugin foo")
    assert "controller" in str(info.value) and "plugin foo" in str(info.value)


def test_extra_variable_cannot_shadow_owned_fact() -> None:
    with pytest.raises(RegistryError, match="first by controller, then by extra_variables"):
        build("x", extra_variables={"model": "other"})


def test_duplicate_tool_names_name_both_classes() -> None:
    class OtherSearch(SearchTool):
        pass

    with pytest.raises(RegistryError) as info:
        build("x", tools=(*TOOLS, OtherSearch))
    text = str(info.value)
    assert "SearchTool" in text and "OtherSearch" in text and "'search'" in text


def test_duplicate_skill_names_name_both_sources() -> None:
    skills = (Skill("a", "s", "b", "package kohaku"), Skill("a", "s", "b", "creature router"))
    with pytest.raises(RegistryError) as info:
        build("x", skills=skills)
    assert "package kohaku" in str(info.value) and "creature router" in str(info.value)


def test_duplicate_plugins_refused() -> None:
    plugins = (StaticPlugin("p", 1, "a"), StaticPlugin("p", 2, "b"))
    with pytest.raises(RegistryError, match="prompt plugin 'p'"):
        build("x", plugins=plugins)


def test_duplicate_channels_refused() -> None:
    with pytest.raises(RegistryError, match="channel 'speak'"):
        build("x", channels=(*CHANNELS, CHANNELS[1]))


def test_tool_colliding_with_channel_send_refused() -> None:
    class SendSpeak(SearchTool):
        name = "send_speak"

    with pytest.raises(RegistryError) as info:
        build("x", tools=(*TOOLS, SendSpeak))
    assert "channel 'speak'" in str(info.value) and "SendSpeak" in str(info.value)


def test_channel_without_send_does_not_claim_send_name() -> None:
    class SendRequests(SearchTool):
        name = "send_requests"

    chans: tuple[ChannelView, ...] = (CHANNELS[0],)  # listen-only
    b = build("x", tools=(*TOOLS, SendRequests), channels=chans)
    assert "send_requests" in b.call_names
