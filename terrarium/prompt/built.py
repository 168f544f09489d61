"""The old import path of ``BuiltPrompt`` (now ``terrarium/prompt/built_prompt.py``)."""

from terrarium.prompt.built_prompt import BuiltPrompt, SectionInfo

__all__ = ["BuiltPrompt", "SectionInfo"]
