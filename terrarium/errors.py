"""One exception family for terrarium: every exception class the package raises lives here.

Every error reads as a sentence and, where it is about a file, carries the file, the line,
the column and the key path so a user can jump straight to the mistake.

    Exception
    ├── TerrariumError            base of every error raised on purpose (message, location,
    │   │                         suggestion)
    │   ├── ConfigError           one located problem in a config file
    │   ├── ConfigErrors          all of them at once (nothing starts until none is left)
    │   ├── TemplateError         a persona or message template that cannot load or render
    │   ├── RegistryError         a variable, section, tool or channel registered twice
    │   ├── PromptError           a prompt that cannot be assembled (e.g. over budget)
    │   ├── FormatError           a call a format cannot render or parse
    │   ├── ModelError            the model server failed or answered badly
    │   │   └── ModelFileMissing  the embedded model's file is not installed
    │   ├── ToolError             a tool failed; its message goes back to the model
    │   ├── ChannelRefusal        a send was refused (route, schema, size, full inbox)
    │   ├── RuntimeFailure        the running team was misused (unknown creature, not running)
    │   └── VoiceError            speech output could not be produced
    │       ├── VoiceFileMissing        the Piper voice is not installed
    │       └── AudioDeviceUnavailable  no sound device; audio goes to WAV files
    └── ValueError
        ├── ConversionError       a call argument did not fit its type (raised inside
        │                         pydantic validators, hence a ValueError)
        └── PayloadProblem        a field typed in the monitor could not be read as its type
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path


@dataclass(frozen=True, slots=True)
class Location:
    """Where in which file a problem is (1-based line and column; 0 when unknown)."""

    file: Path | None = None
    line: int = 0
    column: int = 0
    key_path: tuple[str | int, ...] = ()

    @property
    def key(self) -> str:
        """The key path as a dotted string, e.g. ``terrarium.creatures[0].channels.listen``."""
        out = ""
        for part in self.key_path:
            if isinstance(part, int):
                out += f"[{part}]"
            else:
                out += f".{part}" if out else str(part)
        return out

    def __str__(self) -> str:
        where = str(self.file) if self.file else "<input>"
        if self.line:
            where += f":{self.line}"
            if self.column:
                where += f":{self.column}"
        return where


class TerrariumError(Exception):
    """Base of every error terrarium raises on purpose."""

    def __init__(
        self,
        message: str,
        *,
        location: Location | None = None,
        suggestion: str | None = None,
    ) -> None:
        self.message = message
        self.location = location or Location()
        self.suggestion = suggestion
        super().__init__(self.render())

    @property
    def file(self) -> Path | None:
        return self.location.file

    @property
    def line(self) -> int:
        return self.location.line

    @property
    def column(self) -> int:
        return self.location.column

    @property
    def key(self) -> str:
        return self.location.key

    def render(self) -> str:
        """One or two lines: ``file:line:col: key: message`` then the suggestion."""
        head = ""
        if self.location.file is not None or self.location.line:
            head = f"{self.location}: "
        if self.location.key_path:
            head += f"{self.location.key}: "
        text = head + self.message
        if self.suggestion:
            text += f"\n  hint: {self.suggestion}"
        return text


class ConfigError(TerrariumError):
    """A YAML file is malformed, has a wrong type, an unknown key or a dangling reference."""


class ConfigErrors(TerrariumError):
    """Several config errors found in one pass; nothing starts until all are fixed."""

    def __init__(self, errors: Sequence[ConfigError]) -> None:
        self.errors: list[ConfigError] = list(errors)
        n = len(self.errors)
        body = "\n".join(e.render() for e in self.errors)
        super().__init__(f"{n} configuration error{'s' if n != 1 else ''}:\n{body}")

    def render(self) -> str:  # the aggregated message is already complete
        return self.message


class TemplateError(TerrariumError):
    """A persona template has a syntax error, an unknown variable, or tried to escape."""


class RegistryError(TerrariumError):
    """A variable, section, plugin, tool or channel was registered twice."""


class PromptError(TerrariumError):
    """The prompt could not be assembled within its budgets."""


class ContextOverflow(PromptError):
    """The newest turn alone cannot fit the context window: the input must be refused."""


class ModelError(TerrariumError):
    """The model backend failed: connection, HTTP status, malformed or truncated stream.

    ``permanent``: asking again cannot succeed (an HTTP 4xx other than 408/429: a bad key,
    an unknown model, a request the server refuses), so supervision does not restart on it.
    """

    def __init__(
        self,
        message: str,
        *,
        permanent: bool = False,
        location: Location | None = None,
        suggestion: str | None = None,
    ) -> None:
        self.permanent = permanent
        super().__init__(message, location=location, suggestion=suggestion)


class ModelFileMissing(ModelError):
    """The embedded model's weights are not installed."""


class ToolError(TerrariumError):
    """A tool refused its arguments or failed; the message goes back to the model."""


class ChannelRefusal(TerrariumError):
    """A send was refused (not allowed, schema mismatch, no listener); told to the sender."""


class RuntimeFailure(TerrariumError):
    """The terrarium runtime could not start or continue."""


def collect(errors: Iterable[ConfigError]) -> None:
    """Raise all collected config errors at once, or return when there are none."""
    errs = list(errors)
    if errs:
        raise ConfigErrors(errs)


class FormatError(TerrariumError):
    """A call cannot be rendered in a format, or a format was asked for something it lacks."""


class ConversionError(ValueError):
    """One call argument's value did not fit its type; the message is a full sentence.

    A ValueError (not a TerrariumError) so pydantic validators can raise it as-is.
    """


class VoiceError(TerrariumError):
    """Speech output could not be produced (misuse of a sink, a failed audio device)."""


class VoiceFileMissing(VoiceError):
    """The Piper voice model is not installed."""


class AudioDeviceUnavailable(VoiceError):
    """No sound device can be used; audio goes to WAV files instead."""


class TranscriptionFailed(VoiceError):
    """Speech could not be turned into text (the transcription server, a WAV file)."""


class PayloadProblem(ValueError):
    """A field's text typed in the monitor could not be read as its type."""


@dataclass(slots=True)
class ErrorSink:
    """Accumulates config errors so validation can report all of them, not just the first."""

    errors: list[ConfigError] = field(default_factory=list)

    def add(
        self,
        message: str,
        *,
        file: Path | None = None,
        line: int = 0,
        column: int = 0,
        key_path: Sequence[str | int] = (),
        suggestion: str | None = None,
    ) -> None:
        loc = Location(file=file, line=line, column=column, key_path=tuple(key_path))
        self.errors.append(ConfigError(message, location=loc, suggestion=suggestion))

    def extend(self, errors: Iterable[ConfigError]) -> None:
        self.errors.extend(errors)

    def raise_if_any(self) -> None:
        collect(self.errors)

    def __bool__(self) -> bool:
        return bool(self.errors)


def closest_name(word: str, options: Iterable[str]) -> str | None:
    """The option most like ``word`` (a likely typo), or None when nothing is close."""
    close = difflib.get_close_matches(word, list(options), n=1, cutoff=0.5)
    return close[0] if close else None


def did_you_mean(word: str, options: Iterable[str]) -> str | None:
    """``"did you mean 'x'?"`` for the closest option, or None (for error suggestions)."""
    close = closest_name(word, options)
    return f"did you mean {close!r}?" if close else None


__all__ = [
    "AudioDeviceUnavailable",
    "ChannelRefusal",
    "ConfigError",
    "ConfigErrors",
    "ConversionError",
    "ErrorSink",
    "FormatError",
    "Location",
    "ModelError",
    "ModelFileMissing",
    "PayloadProblem",
    "PromptError",
    "RegistryError",
    "RuntimeFailure",
    "TemplateError",
    "TerrariumError",
    "ToolError",
    "TranscriptionFailed",
    "VoiceError",
    "VoiceFileMissing",
    "closest_name",
    "collect",
    "did_you_mean",
]
