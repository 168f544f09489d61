"""The base of every config schema: an unknown key is an error (reported with a "did you
mean" suggestion by :mod:`terrarium.config.located`), and a field is set by its name or
its alias alike."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)


__all__ = ["Strict"]
