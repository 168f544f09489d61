"""How ``terrarium serve`` is set up (plain data; the command line fills it in)."""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["ServeSettings"]


class ServeSettings(BaseModel):
    """Every knob of the server, with the defaults ``terrarium serve`` uses."""

    model_config = ConfigDict(extra="forbid")

    runs_dir: Path = Path("runs")
    host: str = "127.0.0.1"
    port: int = 8765
    broker: str | None = None
    # with a broker: creatures that run in `terrarium worker --sessions` processes, how long
    # a message a dead worker held waits before another gets it, and how long a remote
    # creature's message waits before the session hears that no worker took it
    remote: list[str] = Field(default_factory=list)
    ack_wait: float = 30.0
    remote_wait: float = 5.0
    token: str | None = Field(default=None, repr=False)  # never printed
    allow_origins: list[str] = Field(default_factory=list)
    idle_unload: float = 300.0  # seconds idle before a loaded session is unloaded
    reap_every: float = 1.0  # how often idle sessions are looked for
    approval_timeout: float = 120.0
    rate: float = 10.0  # inputs per second per session (burst: twice that)
    max_body: int = 65536  # bytes, for requests that are not input to the team
    warm_up: bool = True
    load_timeout: float = 120.0  # seconds a session may take to start
    reply_timeout: float = 300.0  # seconds /v1/chat/completions waits for the team
    # turns computing at once across all sessions (runtime/gate.py: a turn waiting on its
    # model, a tool or a person lets the next in); 0: no limit, every ready turn steps
    turns_at_once: int = Field(default=1, ge=0)
