"""Instructions a message for the typed queue 1→1 and its limit, under valgrind: a figure
that does not move with the machine's load (bench/channels.py's wall-clock ratios do).

Each way runs in a child ``valgrind --tool=cachegrind`` twice, with 0 and with N
messages; the difference over N is the cost of one message. No event loop: one
coroutine awaiting each send is driven by hand (it never waits: the inbox is as large as
the run), and the listener's ``receive_batch(512)`` takes what is there, as
bench/channels.py's does.

- limit: the limit of bench/channels.py (the channel's validation + anyio ``send_nowait``,
  then the receive side takes them);
- send: ``await hub.send(...)`` a message;
- nowait: ``hub.send_nowait(...)`` a message.

    python bench/channels_cost.py [--messages 20000]      # needs valgrind (Debian package)
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
from pathlib import Path

import anyio

from channels import PAYLOAD, Note
from terrarium.channels import ChannelHub, ChannelSpec, CreatureWiring
from terrarium.channels.payload import compile_validator

WAYS = ("limit", "send", "nowait")


def run(way: str, n: int) -> None:
    """The measured part: ``n`` messages one way (with 10 before, so nothing is first)."""
    spec = ChannelSpec(name="c", kind="queue", schema_name="note", validator=Note,
                       capacity=10**8)
    hub = ChannelHub([spec], [CreatureWiring(name="l", listen=("c",)),
                              CreatureWiring(name="s", can_send=("c",))])
    inbox = hub.subscribe("l")
    validate = compile_validator(Note)
    send_stream, recv_stream = anyio.create_memory_object_stream[dict](10**8)

    def take() -> None:
        while inbox.pending():  # (an empty inbox would wait, and there is no loop)
            co = inbox.receive_batch(512)
            try:
                co.send(None)
            except StopIteration:
                pass

    def limit(count: int) -> None:
        put = send_stream.send_nowait
        for _ in range(count):
            put(validate(PAYLOAD))
        get = recv_stream.receive_nowait
        try:
            while True:
                get()
        except anyio.WouldBlock:
            pass

    def send(count: int) -> None:
        hub_send = hub.send

        async def loop() -> None:  # awaited as bench/channels.py does: no StopIteration each
            for _ in range(count):
                await hub_send("s", "c", PAYLOAD)

        co = loop()
        try:
            co.send(None)
        except StopIteration:
            pass
        take()

    def nowait(count: int) -> None:
        send_nowait = hub.send_nowait
        for _ in range(count):
            send_nowait("s", "c", PAYLOAD)
        take()

    ways = {"limit": limit, "send": send, "nowait": nowait}
    ways[way](10)
    ways[way](n)


def instructions(way: str, n: int) -> int:
    return valgrind_instructions([__file__, "--child", way, "--messages", str(n)])


def valgrind_instructions(python_args: list[str]) -> int:
    """Instructions ``python python_args...`` runs, counted by valgrind's cachegrind."""
    out = subprocess.run(
        ["valgrind", "--tool=cachegrind", "--cache-sim=no", "--cachegrind-out-file=/dev/null",
         sys.executable, *python_args], capture_output=True, text=True, check=True).stderr
    found = re.search(r"I\s+refs:\s+([\d,]+)", out)
    if found is None:
        raise SystemExit(f"no instruction count in valgrind's output:\n{out[-2000:]}")
    return int(found.group(1).replace(",", ""))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--messages", type=int, default=20_000)
    ap.add_argument("--child", choices=WAYS, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        run(args.child, args.messages)
        return
    if shutil.which("valgrind") is None:
        raise SystemExit("valgrind is not installed (apt-get install valgrind)")
    per = {w: (instructions(w, args.messages) - instructions(w, 0)) / args.messages
           for w in WAYS}
    print(f"instructions a message ({args.messages:,} messages, valgrind cachegrind; "
          f"{Path(sys.executable).name})")
    for w, label in (("limit", "limit: validate + anyio send_nowait + take"),
                     ("send", "typed queue 1→1, await hub.send"),
                     ("nowait", "typed queue 1→1, hub.send_nowait")):
        ratio = "" if w == "limit" else f"   {per['limit'] / per[w]:.2f}x of the limit"
        print(f"  {label:<44} {per[w]:>8,.0f}{ratio}")


if __name__ == "__main__":
    main()
