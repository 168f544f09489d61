"""SVG snapshots of the monitor's main screens at 80×24 and 120×40.

The app runs on a FrozenHandle (a recorded scripted run) with ``deterministic=True``, so
no run id, time or duration reaches the screen and the pictures are byte-stable.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent / "tui_fixtures"))

from tui_recording import FrozenHandle, Recording, record

from terrarium.tui import MonitorApp, ReplayHandle

SIZES = [(80, 24), (120, 40)]


@pytest.fixture(scope="module")
def recording(tmp_path_factory: pytest.TempPathFactory) -> Recording:
    return record(tmp_path_factory.mktemp("runs"))


def live_app(recording: Recording) -> MonitorApp:
    return MonitorApp(FrozenHandle(recording), deterministic=True)


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
    assert snap_compare(app, press=("left_square_bracket",) * 3, terminal_size=size)
