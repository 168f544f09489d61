"""SVG snapshots of the monitor's main screens at 80×24 and 120×40.

The app runs on a FrozenHandle (a recorded scripted run) with ``deterministic=True``, so
no run id, time or duration reaches the screen and the pictures are byte-stable.
"""

from __future__ import annotations

import dataclasses

import pytest

from terrarium.prompt.built_prompt import BuiltPrompt, SectionInfo
from terrarium.prompt.tail import Tail
from terrarium.tui import MonitorApp, ReplayHandle
from tests.tui_fixtures.tui_recording import FrozenHandle, Recording, record

SIZES = [(80, 24), (120, 40)]


@pytest.fixture(scope="module")
def recording(tmp_path_factory: pytest.TempPathFactory) -> Recording:
    return record(tmp_path_factory.mktemp("runs"))


def pinned(recording: Recording) -> Recording:
    """The recording with token figures and prompts pinned, so the pictures change only
    when the monitor does (not whenever the aggregator's wording or the token estimate do)."""
    statuses = {n: dataclasses.replace(s, tokens_in=400 + 10 * i, tokens_out=8 * i,
                                       cached_tokens=100 * i)
                for i, (n, s) in enumerate(sorted(recording.statuses.items()))}
    prompts = {n: fixed_prompt(n) for n in recording.prompts}
    return dataclasses.replace(recording, statuses=statuses, prompts=prompts)


def fixed_prompt(creature: str) -> BuiltPrompt:
    prefix_texts = {
        "persona": f"You are {creature}, a creature in a terrarium team.\n",
        "channels": "## Channels\nYou listen on: `user_input`.\nYou may send on: `notes`.\n",
    }
    sections = tuple(
        SectionInfo(name, "prefix", len(text.encode()), len(text.split()))
        for name, text in prefix_texts.items()
    )
    tail = Tail(texts={"status": "## Status\nStep 1\n"}, tokens={"status": 4})
    prefix = "".join(prefix_texts.values())
    return BuiltPrompt(creature=creature, step=1, prefix=prefix, prefix_hash="0f" * 32,
                       prefix_sections=sections, prefix_texts=prefix_texts,
                       prefix_tokens=sum(s.tokens for s in sections), tail=tail)


def live_app(recording: Recording) -> MonitorApp:
    return MonitorApp(FrozenHandle(pinned(recording)), deterministic=True)


async def _replay_events(pilot) -> None:  # type: ignore[no-untyped-def]
    app = pilot.app
    app.handle.replay_events()
    for _ in range(3):
        await pilot.pause(0.12)


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
@pytest.mark.parametrize(
    "screen,keys",
    [
        ("team", ()),
        ("creature", ("2",)),
        ("prompt", ("p",)),
        ("topology", ("3",)),
        ("compose", ("c",)),
    ],
)
def test_live_screens(snap_compare, recording: Recording, size, screen, keys) -> None:  # type: ignore[no-untyped-def]
    assert snap_compare(live_app(recording), press=keys, terminal_size=size,
                        run_before=_replay_events)


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_replay_screen(snap_compare, recording: Recording, size) -> None:  # type: ignore[no-untyped-def]
    handle = ReplayHandle(recording.log_path, recording.run_id)
    app = MonitorApp(handle, read_only=True, deterministic=True)
    # the creature tab: token figures on the team tab follow the prompt wording
    assert snap_compare(app, press=("2", *("left_square_bracket",) * 3), terminal_size=size)
