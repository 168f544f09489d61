"""The log's redaction skips a batch only when no value in it can hold a secret.

``write_batch`` first tests all of a batch's values at once (their UTF-8 bytes, see
``channels/log._redacted_rows``) and scans value by value only when that test says it
might matter. These tests hold the fast test to the value-by-value scan it replaces: the
same rows come out, and a secret anywhere in a batch (one row of many, a name, a payload,
a non-ASCII key, a value marshal cannot write) is still masked in the file.
"""

from __future__ import annotations

import random
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from pydantic import BaseModel

from terrarium import secrecy
from terrarium.channels import ChannelHub, ChannelSpec, CreatureWiring, DurableLog
from terrarium.channels.log import EVENT_SQL, _redacted_rows

KEY = "sk-batch-0123456789abcdef"
WIDE = "clé-été-ключ-🔑-secret"  # a key with non-ASCII letters


@pytest.fixture(autouse=True)
def _clean_store() -> Iterator[None]:
    secrecy.forget()
    yield
    secrecy.forget()


def value_by_value(rows: list[tuple[Any, ...]]) -> list[tuple[Any, ...]]:
    """What the log wrote before the batch test: every text value redacted on its own."""
    return [tuple(secrecy.redact(v) if isinstance(v, str) else v for v in r) for r in rows]


class Text(str):
    """A str subclass (marshal does not write these: the batch is scanned)."""


def random_rows(rng: random.Random, secrets: list[str]) -> list[tuple[Any, ...]]:
    words = ["hello", "a@b", "http://x", "http://u:p@h/x", "ftp://tok@h", "é", "\udc80",
             "", "plain text", *secrets, *(s[1:] for s in secrets), *(s[:-1] for s in secrets)]
    rows = []
    for _ in range(rng.randint(1, 12)):
        row: list[Any] = []
        for _ in range(rng.randint(1, 8)):
            kind = rng.random()
            if kind < 0.6:
                row.append("".join(rng.choice(words) for _ in range(rng.randint(0, 3))))
            elif kind < 0.7:
                row.append(rng.random() * 1e9)
            elif kind < 0.8:
                row.append(rng.randint(-(1 << 40), 1 << 40))
            elif kind < 0.9:
                row.append(None)
            else:
                row.append(b"raw" + rng.choice(words).encode("utf-8", "surrogatepass"))
        rows.append(tuple(row))
    return rows


@pytest.mark.parametrize("secrets", [[], [KEY], [KEY, WIDE, "tok4"]],
                         ids=["no secrets", "one", "three"])
def test_the_batch_test_writes_what_the_scan_of_each_value_wrote(secrets: list[str]) -> None:
    for s in secrets:
        secrecy.register(s)
    rng = random.Random(28)
    changed = 0
    for _ in range(400):
        rows = random_rows(rng, secrets)
        want = value_by_value(rows)
        assert [tuple(r) for r in _redacted_rows(rows)] == want
        changed += want != rows
    assert changed > 50  # the cases that must be masked did come up


def test_one_secret_in_a_batch_of_many_rows_is_masked(tmp_path: Path) -> None:
    secrecy.register(KEY)
    rows = [(f"run{i}", float(i), "said", None, f"plain {i}") for i in range(64)]
    rows[41] = ("run41", 41.0, "said", None, f"the key is {KEY}!")
    rows[7] = ("run7", 7.0, "said", None, Text(f"again {KEY}"))  # marshal refuses this one
    with DurableLog(tmp_path / "log.sqlite3") as log:
        log.write_batch([(EVENT_SQL, rows)])
        got = log.query("SELECT run_id, data FROM events ORDER BY id")
    assert got[41] == ("run41", "the key is ***!")
    assert got[7] == ("run7", "again ***")
    assert got[0] == ("run0", "plain 0")
    assert KEY.encode() not in (tmp_path / "log.sqlite3").read_bytes()


class Note(BaseModel):
    text: str


@pytest.mark.parametrize("secret", [KEY, WIDE])
def test_a_secret_in_a_logged_send_never_reaches_the_file(tmp_path: Path, secret: str) -> None:
    """Through the hub: payloads (send and send_many) and a URL password in a payload."""
    secrecy.register(secret)
    path = tmp_path / "log.sqlite3"

    async def main() -> None:
        log = DurableLog(path)
        spec = ChannelSpec(name="c", kind="queue", schema_name="note", validator=Note)
        hub = ChannelHub([spec], [CreatureWiring(name="a", can_send=("c",)),
                                  CreatureWiring(name="b", listen=("c",))], log=log)
        async with hub:
            await hub.send("a", "c", {"text": f"my key: {secret}"})
            await hub.send_many("a", "c", [{"text": "nothing"}, {"text": f"{secret}!"},
                                           {"text": "see http://me:pw1234@host/x"}])
            got = await hub.subscribe("b").receive_batch()
        log.close()
        # the listener gets the message as sent: only the log's copy is masked
        assert [e.payload["text"] for e in got][:2] == [f"my key: {secret}", "nothing"]

    anyio.run(main)
    conn = sqlite3.connect(path)
    payloads = [r[0] for r in conn.execute("SELECT payload FROM messages ORDER BY id")]
    conn.close()
    assert payloads == ['{"text":"my key: ***"}', '{"text":"nothing"}', '{"text":"***!"}',
                        '{"text":"see http://me:***@host/x"}']
    data = b"".join(f.read_bytes() for f in tmp_path.iterdir())
    assert secret.encode() not in data and b"pw1234" not in data
