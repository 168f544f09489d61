"""Read message payloads from the durable log without ever holding up its writer.

Bus events name a message by id only; the payload lives in the log, written before
delivery. A read-only connection in WAL mode never blocks the runtime's writes.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any


class PayloadReader:
    """Point lookups of ``(schema_name, payload)`` by message id; quiet when the log is gone."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._conn: sqlite3.Connection | None = None

    def _connect(self) -> sqlite3.Connection | None:
        if self._conn is None and self.path.is_file():
            try:
                self._conn = sqlite3.connect(f"file:{self.path}?mode=ro", uri=True,
                                             check_same_thread=False)
            except sqlite3.Error:
                return None
        return self._conn

    def __call__(self, message_id: str) -> tuple[str, dict[str, Any]] | None:
        conn = self._connect()
        if conn is None:
            return None
        try:
            row = conn.execute(
                "SELECT schema_name, payload FROM messages WHERE id=?", (message_id,)
            ).fetchone()
        except sqlite3.Error:
            return None
        if row is None:
            return None
        payload = json.loads(row[1])
        return str(row[0]), payload if isinstance(payload, dict) else {"value": payload}

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None


__all__ = [
    "PayloadReader",
]
