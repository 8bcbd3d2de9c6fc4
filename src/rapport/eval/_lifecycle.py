"""One session's life in a run: play (the orchestrator) -> score -> learn -> snapshot the
memory -> commit, in one store transaction, with a fallback when the store cannot take it.

Every failure ends up on the session's record (status ``error``, where and why, the policy of
`Orchestrator`); only an interrupt escapes, and then nothing of the session is stored.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

from rapport.agents import Agent
from rapport.envs import Benchmark, Episode, SessionFailure, SessionLog
from rapport.llm import ModelRoles, record_calls
from rapport.log import (
    Condition,
    MemoryState,
    MemoryVersion,
    ModelCall,
    NoOutcome,
    SessionRecord,
    SessionSpec,
    UserRef,
    UserSpec,
)
from rapport.memory import Memory
from rapport.store import RunStore

from ._orchestrator import Orchestrator, guarded, one_line, record_failure

AgentFactory = Callable[[ModelRoles], Agent]
"""Builds the agent under test from the run's model roles."""


@dataclass
class UserTrack:
    """One user's sessions under one condition, as a run plays them in order."""

    condition: Condition
    memory: Memory
    user: UserSpec
    ref: UserRef
    """Who the condition's memory is about."""
    done: set[int]
    """Session indices already stored and kept."""
    latest: MemoryVersion | None
    """The newest memory version stored for the user (None: none yet)."""
    version: int
    """The memory version the user's next session starts from."""


async def live_session(
    track: UserTrack,
    spec: SessionSpec,
    *,
    benchmark: Benchmark,
    models: ModelRoles,
    store: RunStore,
    agent_factory: AgentFactory | None = None,
) -> SessionRecord:
    """Play one session of the track, snapshot its memory and commit both; the track moves
    on to the memory version after it. Returns the record as committed.

    Args:
        track: the user and condition; it holds the memory version the session starts from.
        spec: the session.
        benchmark: the run's benchmark.
        models: the run's model roles.
        store: where the session is committed.
        agent_factory: builds the agent under test (default: `Agent` on the ``agent`` role).
    """
    version = track.version
    try:
        record = await play_session(
            benchmark,
            spec,
            track.user,
            models=models,
            memory=track.memory,
            condition=track.condition,
            ref=track.ref,
            memory_version=version,
            agent=agent_factory(models) if agent_factory else None,
        )
    except Exception as exc:
        # play_session records every failure; this is the net under it.
        record = bare_record(track.condition, track.user, spec, version)
        record_failure(record, failure("runner", exc))
    track.version = spec.index + 1
    state = track.latest.state if track.latest is not None else MemoryState()
    try:
        state = track.memory.snapshot(track.ref)
    except Exception as exc:
        record_failure(record, failure("memory.snapshot", exc))
    snapshot = MemoryVersion(
        condition=track.condition.name,
        user_id=track.user.id,
        version=track.version,
        state=state,
    )
    record = commit(store, record, snapshot)
    track.latest = snapshot
    return record


async def play_session(
    benchmark: Benchmark,
    spec: SessionSpec,
    user: UserSpec,
    *,
    models: ModelRoles,
    memory: Memory,
    condition: Condition | None = None,
    ref: UserRef | None = None,
    memory_version: int = 0,
    agent: Agent | None = None,
) -> SessionRecord:
    """Play, score and (when ``spec.learn``) learn from one session, as a run does.

    Every failure ends up on the returned record (status ``error``, with where and why);
    only an interrupt escapes.

    Args:
        benchmark: the benchmark whose episode plays the session.
        spec: the session.
        user: its user.
        models: the run's model roles.
        memory: the condition's memory (learns when the session played without error).
        condition: the condition (default: one named after the memory).
        ref: who memory is about (default: the user with the benchmark's truth).
        memory_version: the memory version the session starts from (for the record).
        agent: the agent under test (default: `Agent` on the ``agent`` role).
    """
    condition = condition or Condition(name=memory.name, memory=memory.name)
    ref = ref or user.ref(truth=benchmark.truth(user, condition))
    played = await converse(
        benchmark, spec, user, models, memory, condition, ref, memory_version, agent
    )
    calls = [*played.calls, *await grade(played, benchmark)]
    record = played.record
    if spec.learn and record.status == "ok":
        learned, failed = await learn(memory, ref, record)
        calls += learned
        if failed is not None:
            record_failure(record, failed)
    record.usage = calls
    record.finished_at = time.time()
    return record


@dataclass
class Played:
    """A session whose conversation is over: what its grading goes on with."""

    record: SessionRecord
    calls: list[ModelCall]
    """The model calls of the conversation (memory's context and recall included)."""
    episode: Episode | None = None
    """None: the episode could not be built (nothing to grade)."""
    orchestrator: Orchestrator | None = None
    log: SessionLog | None = None
    """None: the conversation failed."""


async def converse(
    benchmark: Benchmark,
    spec: SessionSpec,
    user: UserSpec,
    models: ModelRoles,
    memory: Memory,
    condition: Condition,
    ref: UserRef,
    memory_version: int,
    agent: Agent | None = None,
) -> Played:
    """A session's conversation, up to (not including) the episode's ``finish``."""
    record = SessionRecord(
        condition=condition.name,
        user_id=user.id,
        index=spec.index,
        spec_id=spec.id,
        split=spec.split,
        memory_version=memory_version,
    )
    with record_calls() as calls:
        try:
            episode = benchmark.episode(spec, user, models, condition)
        except Exception as exc:
            record_failure(record, failure("benchmark", exc))
            return Played(record, list(calls))
        agent = agent if agent is not None else Agent(models.get("agent"))
        orchestrator = Orchestrator(agent, memory, ref)
        log = await orchestrator.converse(episode, record)
        record.memory_health = memory.health(ref)
    return Played(record, list(calls), episode, orchestrator, log)


async def grade(played: Played, benchmark: Benchmark) -> list[ModelCall]:
    """The episode's ``finish`` (judges ...), its outcome and the benchmark's scores, on the
    played record; returns the model calls they made."""
    if played.episode is None or played.orchestrator is None:
        return []
    record = played.record
    with record_calls() as calls:
        await played.orchestrator.conclude(played.episode, record, played.log)
    try:
        record.scores = dict(benchmark.score(record))
    except Exception as exc:
        record_failure(record, failure("score", exc))
    return list(calls)


async def learn(
    memory: Memory, ref: UserRef, record: SessionRecord
) -> tuple[list[ModelCall], SessionFailure | None]:
    """``memory.learn`` from the record: its model calls, and its failure (if it failed)."""
    with record_calls() as calls:
        try:
            await guarded("memory.learn", memory.learn(ref, record))
        except SessionFailure as exc:
            return list(calls), exc
    return list(calls), None


def bare_record(
    condition: Condition, user: UserSpec, spec: SessionSpec, version: int
) -> SessionRecord:
    """An empty record of the session (for a failure below the session's own policy)."""
    return SessionRecord(
        condition=condition.name,
        user_id=user.id,
        index=spec.index,
        spec_id=spec.id,
        split=spec.split,
        memory_version=version,
        finished_at=time.time(),
    )


def commit(store: RunStore, record: SessionRecord, snapshot: MemoryVersion) -> SessionRecord:
    """Commit a session; one the store cannot take is committed as an error in its place.

    A record or memory state that cannot be serialized (too deep, invalid text that slipped
    past the provider boundary) must not stop the run: the session is kept with status
    ``error``, its usage and an event saying why, without the parts that failed.
    """
    try:
        store.commit_session(record, snapshot)
        return record
    except Exception as exc:
        why = failure("store", exc)
    bare = record.model_copy(
        update={
            "status": "error",
            "turns": [],
            "events": [],
            "scores": {},
            "outcome": NoOutcome(),
            "memory_health": None,
            "usage": [
                c.model_copy(update={"error": None if c.error is None else one_line(c.error)})
                for c in record.usage
            ],
        }
    )
    record_failure(bare, why)
    try:
        store.commit_session(bare, snapshot)
    except Exception:
        # The memory state itself is what cannot be stored: keep the one before.
        previous = store.latest_memory(snapshot.condition, snapshot.user_id)
        state = previous.state if previous is not None else MemoryState()
        store.commit_session(bare, snapshot.model_copy(update={"state": state}))
    return bare


def failure(where: str, exc: Exception) -> SessionFailure:
    """An exception caught at ``where`` as the failure a record carries."""
    return SessionFailure(where, one_line(exc), error_type=type(exc).__name__)
