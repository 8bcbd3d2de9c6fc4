"""Which of a run's sessions play at once, and what of a session runs aside.

``concurrency`` workers take units in order: a unit is one user's sessions under one
condition, played in order, each from the memory the one before left. Under a memory that
does not learn between sessions (``BaseMemory.learns`` False: ``none``, ``oracle``) a
user's sessions do not depend on each other, so with ``concurrency`` above 1 each is a unit
of its own, played on its own `fork` of the memory.

With ``concurrency`` above 1 a session's grading (the episode's ``finish``: judges; its
outcome and scores) also runs aside while its worker plays on, where nothing reads it before
the next session: under a memory that does not learn, and under one whose ``learn`` reads the
conversation alone (``BaseMemory.reads_grading`` False). The latter learns before the grade
is known; if the grade makes the session an error (so that, played in order, it would not
have learned), the learning is undone and the user's next session is played again. Either
way each session is committed whole, in one transaction, in order within its user and
condition, with the record and memory a run in order would store.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Coroutine
from dataclasses import dataclass, field, replace
from typing import Any, TypeVar

from rapport.envs import Benchmark, SessionFailure
from rapport.llm import ModelRoles, call_key, participant
from rapport.log import MemoryState, MemoryVersion, ModelCall, SessionRecord, SessionSpec
from rapport.memory import BaseMemory, Memory
from rapport.store import RunStore

from ._failures import Tally
from ._lifecycle import (
    AgentFactory,
    Played,
    UserTrack,
    bare_record,
    commit,
    converse,
    failure,
    grade,
    learn,
)
from ._orchestrator import record_failure
from ._progress import Progress

T = TypeVar("T")

KEY_STRIDE = 1_000_000
"""Call keys of one job's sessions: the job's position times this, plus the session index."""


def spawn(coro: Coroutine[Any, Any, T]) -> asyncio.Task[T]:
    """Run a coroutine as a task that is a lockstep participant of its own, counted from
    now (not from when it first runs), so the engine waits for it to ask."""
    stack = contextlib.ExitStack()
    stack.enter_context(participant())
    task = asyncio.ensure_future(coro)
    task.add_done_callback(lambda _task: stack.close())
    return task


async def cancel(task: asyncio.Task[Any] | None) -> None:
    """Cancel a task and wait until it has stopped."""
    if task is not None:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)


def learns(memory: Memory) -> bool:
    """Whether a user's session can depend on the ones before it under this memory."""
    return not isinstance(memory, BaseMemory) or memory.learns


def reads_grading(memory: Memory) -> bool:
    """Whether the memory's ``learn`` reads a session's grading."""
    return not isinstance(memory, BaseMemory) or memory.reads_grading


def forked(track: UserTrack, version: int) -> UserTrack:
    """The track on its own fork of a memory that does not learn, from ``version``."""
    memory = track.memory
    assert isinstance(memory, BaseMemory) and not memory.learns
    return replace(track, memory=memory.fork(), version=version)


def versions_before(specs: list[SessionSpec]) -> dict[int, int]:
    """Session index -> the memory version it starts from when a user's sessions are
    played in order (the index after the one before it; 0 for the first)."""
    return {s.index: (specs[n - 1].index + 1 if n else 0) for n, s in enumerate(specs)}


@dataclass
class Unit:
    """What a worker takes at a time: a track and its sessions, to play in order."""

    track: UserTrack
    specs: list[SessionSpec]
    key: int
    """The call key of its first session (see `KEY_STRIDE`)."""


@dataclass
class Aside:
    """A session whose conversation is over, waiting for its grading to be committed."""

    track: UserTrack
    spec: SessionSpec
    played: Played
    grading: asyncio.Task[None] | None = None
    """The grading running aside (None: done before the worker went on)."""
    grade_calls: list[ModelCall] = field(default_factory=list)
    learn_calls: list[ModelCall] = field(default_factory=list)
    learn_failure: SessionFailure | None = None
    before: MemoryState | None = None
    """The memory before a `learn` made ahead of the grade (to undo it)."""
    state: MemoryState | None = None
    """The memory after the session (None: its snapshot failed)."""
    state_failure: SessionFailure | None = None


@dataclass
class Scheduler:
    """Plays units with ``workers`` workers and commits every session it plays."""

    benchmark: Benchmark
    models: ModelRoles
    store: RunStore
    tally: Tally
    bar: Progress
    agent_factory: AgentFactory | None = None
    aside: bool = False
    """Grade aside where nothing reads the grade before the next session."""

    async def run(self, units: list[Unit], workers: int) -> None:
        """Play every unit; on an interrupt or a crash stop the rest (what was committed
        stays)."""
        queue = units[::-1]
        tasks = [asyncio.ensure_future(self._worker(queue)) for _ in range(workers)]
        try:
            await asyncio.gather(*tasks)
        finally:
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)

    async def _worker(self, queue: list[Unit]) -> None:
        pending: Aside | None = None
        try:
            while queue:
                pending = await self._unit(queue.pop(), pending)
            if pending is not None:
                await self._settle(pending)
                pending = None
        finally:
            if pending is not None:
                await cancel(pending.grading)

    async def _unit(self, unit: Unit, pending: Aside | None) -> Aside | None:
        """Play a unit's sessions in order; each one's conversation overlaps the commit of
        the session before it (this unit's or the worker's previous one). Returns the
        last session, not yet committed."""
        track, n = unit.track, 0
        while n < len(unit.specs):
            spec = unit.specs[n]
            if pending is not None and not self.aside:
                await self._settle(pending)
                pending = None
            with call_key(unit.key + spec.index):
                playing = spawn(self._play(track, spec))
            if pending is not None:
                again = await self._after(pending, playing, track)
                pending = None
                if again:
                    continue
            pending = await playing
            n += 1
        return pending

    async def _after(self, pending: Aside, playing: asyncio.Task[Aside], track: UserTrack) -> bool:
        """Commit ``pending`` while ``playing`` plays; True when ``playing`` had to be
        stopped, to be played again (its track's learning before it was undone)."""
        try:
            undone = await self._settle(pending)
        except BaseException:
            await _stop(playing)
            raise
        again = undone and pending.track is track
        if again:
            await _stop(playing)
        if undone:
            assert pending.before is not None
            pending.track.memory.restore(pending.track.ref, pending.before)
            pending.track.version = pending.spec.index + 1
        return again

    def _agent(self) -> Any:
        return self.agent_factory(self.models) if self.agent_factory else None

    async def _play(self, track: UserTrack, spec: SessionSpec) -> Aside:
        """The conversation, then the grading and learning: aside where that is safe."""
        try:
            played = await converse(
                self.benchmark,
                spec,
                track.user,
                self.models,
                track.memory,
                track.condition,
                track.ref,
                track.version,
                self._agent(),
            )
        except Exception as exc:  # converse records every failure; this is the net under it
            record = bare_record(track.condition, track.user, spec, track.version)
            record_failure(record, failure("runner", exc))
            played = Played(record, [])
        aside = Aside(track, spec, played)
        track.version = spec.index + 1
        learning = spec.learn and played.record.status == "ok"
        if not self.aside or (learns(track.memory) and reads_grading(track.memory)):
            await self._grade_then_learn(aside)
        elif not learns(track.memory):
            aside.grading = spawn(self._grade_then_learn(aside))
        elif not learning or self._remember_before(aside):
            await self._learn_ahead(aside, learning)
        else:
            await self._grade_then_learn(aside)
        return aside

    async def _grade_then_learn(self, aside: Aside) -> None:
        """Grade, learn when the session is still ``ok``, then snapshot: the order of a run
        in order."""
        aside.grade_calls = await grade(aside.played, self.benchmark)
        track, record = aside.track, aside.played.record
        if aside.spec.learn and record.status == "ok":
            aside.learn_calls, aside.learn_failure = await learn(track.memory, track.ref, record)
        _snapshot(aside)

    def _remember_before(self, aside: Aside) -> bool:
        """Keep the memory as it is before learning ahead; False if it cannot be kept."""
        try:
            aside.before = aside.track.memory.snapshot(aside.track.ref)
        except Exception:
            return False
        return True

    async def _learn_ahead(self, aside: Aside, learning: bool) -> None:
        """Grade aside, and learn now from the conversation (a copy of the record, which
        the grading goes on writing to)."""
        record = aside.played.record
        copy = record.model_copy(deep=True) if learning else None
        aside.grading = spawn(self._grade(aside))
        if copy is not None:
            track = aside.track
            aside.learn_calls, aside.learn_failure = await learn(track.memory, track.ref, copy)
        _snapshot(aside)

    async def _grade(self, aside: Aside) -> None:
        aside.grade_calls = await grade(aside.played, self.benchmark)

    async def _settle(self, aside: Aside) -> bool:
        """Wait for the grading, then commit the session as a run in order would have it.
        Returns True when the session learned ahead of a grade that made it an error: the
        caller undoes the learning (the committed memory is the one before it)."""
        record = aside.played.record
        if aside.grading is not None:
            try:
                await aside.grading
            except Exception as exc:  # grading records its failures; this is the net
                record_failure(record, failure("runner", exc))
        undone = aside.before is not None and record.status != "ok"
        state, learned = (aside.before, []) if undone else (aside.state, aside.learn_calls)
        if not undone:
            for why in (aside.learn_failure, aside.state_failure):
                if why is not None:
                    record_failure(record, why)
        track = aside.track
        if state is None:
            state = track.latest.state if track.latest is not None else MemoryState()
        record.usage = [*aside.played.calls, *aside.grade_calls, *learned]
        record.finished_at = time.time()
        snapshot = MemoryVersion(
            condition=track.condition.name,
            user_id=track.user.id,
            version=aside.spec.index + 1,
            state=state,
        )
        self._count(commit(self.store, record, snapshot))
        track.latest = snapshot
        return undone

    def _count(self, record: SessionRecord) -> None:
        self.tally.count(record)
        generated = sum(c.completion_tokens for c in record.usage if not c.cached)
        self.bar.advance(errors=self.tally.errors, tokens=generated)


def _snapshot(aside: Aside) -> None:
    try:
        aside.state = aside.track.memory.snapshot(aside.track.ref)
    except Exception as exc:
        aside.state_failure = failure("memory.snapshot", exc)


async def _stop(playing: asyncio.Task[Aside]) -> None:
    """Stop a session being played, and its grading if it had got that far."""
    if playing.done() and not playing.cancelled() and playing.exception() is None:
        await cancel(playing.result().grading)
    await cancel(playing)
