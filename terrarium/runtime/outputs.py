"""Sinks for the ``stdout`` and ``file`` named outputs (``tts`` lives in terrarium.voice)."""

from __future__ import annotations

from pathlib import Path

import anyio

from terrarium.voice.sink import CutReport


class FileOutput:
    """Appends each utterance to a file, one line per utterance."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._buf: list[str] = []

    async def begin(self, utterance_id: str) -> None:
        self._buf = []

    async def write(self, text: str) -> None:
        self._buf.append(text)

    async def end(self) -> None:
        text = "".join(self._buf).strip()
        self._buf = []
        if text:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            async with await anyio.open_file(self.path, "a", encoding="utf-8") as f:
                await f.write(text + "\n")

    async def interrupt(self) -> CutReport | None:
        return None
