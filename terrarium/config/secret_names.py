"""The environment variables a team's config names as secrets, whatever they are called.

``terrarium.secrecy.take_secrets`` moves variables out of the environment by the look of
their names (``..._KEY``, ``..._TOKEN``, ...) at the process's start; a config may name a
secret variable with any name (``api_key_env: OPENROUTER``, ``{env: TRACKER}``), so once the
team is loaded the command line takes these too (``take_secrets(secret_names(team))``).
"""

from __future__ import annotations

from terrarium.config.models import EnvValue
from terrarium.config.team import Team

__all__ = ["secret_names"]


def secret_names(team: Team) -> list[str]:
    """Every variable the team's config reads a key, token or header value from."""
    names: set[str] = set()
    if team.transcription is not None and team.transcription.api_key_env:
        names.add(team.transcription.api_key_env)
    for cdef in team.everyone.values():
        cfg = cdef.config
        if cfg.controller is not None and cfg.controller.api_key_env:
            names.add(cfg.controller.api_key_env)
        for server in cfg.mcp_servers.values():
            for value in (*server.env.values(), *server.headers.values()):
                if isinstance(value, EnvValue):
                    names.add(value.env)
        for plugin in cfg.plugins:
            env = plugin.options.get("env") if plugin.module == "redactor" else None
            if isinstance(env, list):
                names.update(str(n) for n in env)
    return sorted(names)
