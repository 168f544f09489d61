"""Running sub-agents: a creature hands a task to another creature config and gets its answer.

A sub-agent is a creature config run on its own: its own assembled prompt, tools and limits
(``max_iterations``, ``max_tokens``, a timeout), its own :class:`Controller` for one turn
whose final text is the answer. :class:`Subagents` is the :class:`Delegator` a creature's
sub-agent tools call (``tools/delegate.py``); the runtime puts one in the creature's tool
state and hands it the model factory (the controller builds no model itself).

Limits: sub-agents nest at most ``subagent_depth`` deep (the top creature's setting, counted
from it), and at most ``subagent_concurrency`` run at once in one creature's tree (one
``anyio.CapacityLimiter`` shared down the tree).

What a sub-agent inherits from its caller: who approves its gated calls (``--yes``, the
terminal, the monitor) and who answers its ``ask_user``; and, unless it names a
``workspace`` of its own, where its file and shell tools act: its caller's workspace, else
``<run dir>/workspace/<label>`` (``workspace_root``), else a new temporary folder. Never its
config folder: a sub-agent with ``edit`` could otherwise rewrite its own ``config.yaml``.

Recording: ``SubagentStarted``/``SubagentEnded`` carry the parent creature and a run id;
the sub-agent's own events are re-labelled ``parent/name`` (``lead/researcher``,
``lead/researcher/scout``), so the log and its watchers show them nested under the parent.
"""

from __future__ import annotations

import dataclasses
import tempfile
import uuid
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import anyio

from terrarium.config import load_single_creature
from terrarium.config.creature import merge_configs
from terrarium.config.models import CreatureConfig, SubagentConfig
from terrarium.controller.assembly import CreatureParts, assemble
from terrarium.controller.incoming import Incoming
from terrarium.controller.loop import Controller
from terrarium.errors import TerrariumError, ToolError
from terrarium.events import Event, SubagentEnded, SubagentStarted, TranscriptAppended
from terrarium.llm.base import ChatModel
from terrarium.tools.approval import Approver
from terrarium.tools.base import ToolContext
from terrarium.tools.delegate import STATE_PROGRESS, STATE_SUBAGENTS

__all__ = ["ModelFactory", "Subagents", "load_subagent"]

ModelFactory = Callable[[CreatureParts, str], ChatModel]
"""The model a sub-agent runs on, from its parts and its label (``lead/researcher``)."""


def _entry(sub: str | SubagentConfig) -> SubagentConfig:
    return SubagentConfig(config=sub) if isinstance(sub, str) else sub


def load_subagent(name: str, sub: str | SubagentConfig) -> CreatureParts:
    """The sub-agent's parts: its config, with the inline overrides and limits on top."""
    entry = _entry(sub)
    team = load_single_creature(entry.config)
    cdef = next(iter(team.creatures.values()))
    data = cdef.config.model_dump(exclude_unset=True, by_alias=True)
    over: dict[str, Any] = dict(entry.overrides)
    if entry.max_iterations is not None:
        over["max_iterations"] = entry.max_iterations
    if entry.max_tokens is not None:
        over["controller"] = {**over.get("controller", {}), "max_tokens": entry.max_tokens}
    if over:
        try:
            config = CreatureConfig.model_validate(merge_configs(data, over))
        except ValueError as exc:
            raise TerrariumError(f"the overrides of sub-agent {name!r} are invalid: {exc}"
                                 ) from exc
        cdef.loaded = dataclasses.replace(cdef.loaded, config=config)
    return assemble(team, cdef.name)


class Subagents:
    """The sub-agents one creature (or one sub-agent) may call; see the module docstring."""

    def __init__(self, entries: Mapping[str, str | SubagentConfig], *, label: str,
                 make_model: ModelFactory, emit: Callable[[Event], None],
                 max_depth: int = 2, concurrency: int = 4, depth: int = 0,
                 limiter: anyio.CapacityLimiter | None = None,
                 parent_run: str | None = None, approver: Approver | None = None,
                 workspace_root: Path | None = None) -> None:
        self.entries = dict(entries)
        self.label = label  # who calls: "lead", or "lead/researcher" for a nested one
        self.make_model = make_model
        self.emit = emit
        self.max_depth = max_depth
        self.depth = depth  # the caller's depth: 0 for a team creature
        self.limiter = limiter or anyio.CapacityLimiter(concurrency)
        self.parent_run = parent_run
        self.approver = approver  # who approves the gated calls of the sub-agents
        self.workspace_root = workspace_root  # <run dir>/workspace, set by the runtime
        self._parts: dict[str, CreatureParts] = {}

    @classmethod
    def for_parts(cls, parts: CreatureParts, *, make_model: ModelFactory,
                  emit: Callable[[Event], None]) -> Subagents:
        cfg = parts.cdef.config
        return cls(cfg.subagents, label=parts.name, make_model=make_model, emit=emit,
                   max_depth=cfg.subagent_depth, concurrency=cfg.subagent_concurrency)

    def parts(self, name: str) -> CreatureParts:
        if name not in self._parts:
            self._parts[name] = load_subagent(name, self.entries[name])
        return self._parts[name]

    def _workspace(self, parts: CreatureParts, label: str, ctx: ToolContext) -> Path | None:
        """Where the sub-agent's file and shell tools act when it names no workspace (see
        the module docstring); None when it names one (its own, relative to its config)."""
        if parts.loop.workspace is not None:
            return None
        if ctx.workspace is not None:
            return ctx.workspace if ctx.workspace.is_absolute() else ctx.cwd / ctx.workspace
        if self.workspace_root is not None:
            return self.workspace_root / label
        return Path(tempfile.mkdtemp(prefix=f"terrarium-{label.replace('/', '-')}-"))

    def _relabel(self, label: str, progress: list[str] | None) -> Callable[[Event], None]:
        """The child's emit: its events under ``label``; what it writes also goes to the
        background job's output so far, when it runs as one."""
        emit = self.emit

        def relabelled(ev: Event) -> None:
            if hasattr(ev, "creature"):
                ev = dataclasses.replace(ev, creature=label)  # type: ignore[call-arg]
            if (progress is not None and isinstance(ev, TranscriptAppended)
                    and ev.entry.kind in ("assistant", "tool_call")):
                progress.append(f"{label}: {ev.entry.text}")
            emit(ev)

        return relabelled

    async def delegate(self, name: str, task: str, inputs: Mapping[str, Any],
                       ctx: ToolContext) -> str:
        if name not in self.entries:
            raise ToolError(f"There is no sub-agent {name!r}.")
        depth = self.depth + 1
        if depth > self.max_depth:
            raise ToolError(f"The sub-agent {name} cannot start: sub-agents may nest only "
                            f"{self.max_depth} deep. Do this part yourself.")
        entry = _entry(self.entries[name])
        try:
            parts = self.parts(name)
        except TerrariumError as exc:
            raise ToolError(f"The sub-agent {name} cannot be loaded: {exc.message}") from exc
        label = f"{self.label}/{name}"
        run_id = uuid.uuid4().hex[:12]
        self.emit(SubagentStarted(creature=self.label, subagent=name, run_id=run_id,
                                  depth=depth, task=task, parent_run=self.parent_run))
        lines = [task, *(f"{k}: {v}" for k, v in inputs.items())]
        progress = ctx.state.get(STATE_PROGRESS)
        ok, answer, rounds = False, "", 0
        try:
            async with self.limiter:
                with anyio.fail_after(entry.timeout):
                    child = Controller(parts, self.make_model(parts, label),
                                       emit=self._relabel(label, progress),
                                       approver=self.approver, answerer=ctx.answerer)
                    workspace = self._workspace(parts, label, ctx)
                    if workspace is not None:
                        workspace.mkdir(parents=True, exist_ok=True)
                        child.tool_ctx.workspace = workspace
                    child.tool_ctx.state[STATE_SUBAGENTS] = Subagents(
                        parts.cdef.config.subagents, label=label, make_model=self.make_model,
                        emit=self.emit, max_depth=self.max_depth, depth=depth,
                        limiter=self.limiter, parent_run=run_id, approver=self.approver,
                        workspace_root=self.workspace_root)
                    result = await child.run_turn([Incoming(text="\n".join(lines))])
            rounds = result.rounds
            answer = result.text.strip() or "(the sub-agent gave no answer)"
            ok = True
            return answer
        except TimeoutError:
            answer = f"The sub-agent {name} did not finish within {entry.timeout:g} s."
            raise ToolError(answer) from None
        except TerrariumError as exc:
            answer = f"The sub-agent {name} failed: {exc.message}"
            raise ToolError(answer) from exc
        finally:
            self.emit(SubagentEnded(creature=self.label, subagent=name, run_id=run_id,
                                    ok=ok, result=answer or "cancelled", rounds=rounds))
