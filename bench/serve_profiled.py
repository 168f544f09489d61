"""``python bench/serve_profiled.py OUT serve PATH ...``: the ``terrarium`` command under
cProfile (the event loop's thread, by its CPU time), the profile written to OUT at exit.

``bench/voice.py --socket`` uses it when ``BENCH_SERVE_PROFILE=OUT`` is set: the served
runtime's CPU by function, beside the stages (how the WebSockets' per-message deflate
was found). uvicorn raises SIGTERM again after its graceful exit; a no-op handler lets
that return here so the profile is written.
"""

from __future__ import annotations

import cProfile
import signal
import sys
import time

from terrarium.cli import entry


def main() -> None:
    out = sys.argv[1]
    sys.argv = ["terrarium", *sys.argv[2:]]
    signal.signal(signal.SIGTERM, lambda *_: None)
    prof = cProfile.Profile(time.thread_time)
    prof.enable()
    try:
        entry()
    finally:
        prof.disable()
        prof.dump_stats(out)


if __name__ == "__main__":
    main()
