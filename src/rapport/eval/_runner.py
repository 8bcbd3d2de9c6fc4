"""The experiment runner: conditions x users, each user's sessions in order, one commit each.

`Experiment.run` works through the sessions that are not yet stored (a prepared experiment:
see `_prepare.prepare_experiment`), which makes re-running the same command a resume.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import BaseModel, Field

from rapport.agents import Agent
from rapport.envs import Benchmark, SessionFailure
from rapport.llm import ModelRoles, call_key, participant, record_calls
from rapport.log import (
    Condition,
    ErrorEvent,
    ExperimentConfig,
    MemoryState,
    MemoryVersion,
    NoOutcome,
    SessionRecord,
    SessionSpec,
    UserRecord,
    UserRef,
    UserSpec,
)
from rapport.memory import Memory
from rapport.store import (
    ConfigMismatchError,
    RunDirBusy,
    RunDirLock,
    RunStore,
    StoreError,
)

from ._metrics import Estimate, condition_metrics, metric_names
from ._orchestrator import Orchestrator, guarded, one_line, record_failure
from ._progress import Progress
from ._provenance import describe_invocation


class ExperimentError(ValueError):
    """The experiment cannot start (bad name, option, model or data); nothing was written."""


AgentFactory = Callable[[ModelRoles], Agent]
"""Builds the agent under test from the run's model roles."""


class ProviderOutage(RuntimeError):
    """The run stopped: too many sessions in a row failed on a model provider.

    Every session committed before stays; running the same command again resumes (and,
    by default, retries the sessions that failed).
    """


MAX_CONSECUTIVE_FAILURES = 10
"""Sessions in a row that may fail on a provider (``ModelError``) before the run stops."""


class RunResult(BaseModel):
    """What one invocation of the runner did."""

    run_dir: Path
    run_id: str
    sessions_run: int = 0
    """Sessions run and committed by this invocation."""
    sessions_skipped: int = 0
    """Sessions already in the store (resume)."""
    errors: int = 0
    """Sessions this invocation recorded with status ``error``."""
    model_calls: int = 0
    """Calls this invocation sent to a model that answered (cache hits excluded)."""
    cached_calls: int = 0
    failed_calls: int = 0
    """Calls that failed (provider errors, outputs invalid after retries): never cached."""
    retried: int = 0
    """Stored error sessions this invocation ran again (with the sessions after them)."""
    scores: dict[str, dict[str, Estimate]] = Field(default_factory=dict)
    """Condition -> metric -> mean over users with its 95% bootstrap CI, over every eval
    session the run holds (this invocation's and earlier ones'), as ``rapport report`` shows
    them."""


@dataclass
class _Job:
    condition: Condition
    memory: Memory
    user: UserSpec
    specs: list[SessionSpec]


@dataclass
class _Tally:
    sessions_run: int = 0
    errors: int = 0
    model_calls: int = 0
    cached_calls: int = 0
    failed_calls: int = 0
    retried: int = 0
    consecutive_failures: int = 0
    max_failures: int = MAX_CONSECUTIVE_FAILURES
    bar: Progress | None = field(default=None, repr=False)


class Experiment:
    """A checked experiment, ready to run. Build it with `prepare_experiment`."""

    def __init__(
        self,
        config: ExperimentConfig,
        benchmark: Benchmark,
        conditions: list[Condition],
        models: ModelRoles,
        memories: dict[str, Memory],
        users: list[UserSpec],
        sessions: dict[str, list[SessionSpec]],
        agent_factory: AgentFactory | None = None,
    ) -> None:
        self.agent_factory = agent_factory
        self.config = config
        self.benchmark = benchmark
        self.conditions = conditions
        self.models = models
        self.memories = memories
        self.users = users
        self.sessions = sessions

    @property
    def total_sessions(self) -> int:
        """Sessions in the whole run (all conditions)."""
        return len(self.conditions) * sum(len(s) for s in self.sessions.values())

    def user_ref(self, user: UserSpec, condition: Condition) -> UserRef:
        """Who the condition's memory is about (the truth comes from the benchmark)."""
        return user.ref(truth=self.benchmark.truth(user, condition))

    async def run(
        self,
        *,
        progress: bool = True,
        retry_errors: bool = True,
        max_failures: int = MAX_CONSECUTIVE_FAILURES,
    ) -> RunResult:
        """Run every session not yet stored; commit each one as it finishes.

        Args:
            progress: show a progress bar.
            retry_errors: run stored error sessions again (from a user's first error on,
                with the memory as it was before it); ``False`` keeps them.
            max_failures: stop after this many sessions in a row failed on a model
                provider (0: never stop).

        Raises:
            ExperimentError: the run dir holds a run with a different config.
            ProviderOutage: ``max_failures`` sessions in a row failed on a provider.
        """
        lock = RunDirLock(self.config.run_dir)
        try:
            self.config.run_dir.mkdir(parents=True, exist_ok=True)
            lock.acquire()
            store = RunStore(self.config.run_dir)
        except RunDirBusy as exc:
            raise ExperimentError(str(exc)) from exc
        except (OSError, StoreError) as exc:
            lock.release()
            raise ExperimentError(f"run dir {self.config.run_dir}: {one_line(exc)}") from exc
        try:
            try:
                header = store.create_or_open(self._as_stored(store), self.conditions)
            except ConfigMismatchError as exc:
                raise ExperimentError(str(exc)) from exc
            store.add_invocation(describe_invocation(self))
            store.put_users(
                [UserRecord(user_id=u.id, spec=u.model_dump(mode="json")) for u in self.users]
            )
            # User-major: each user's conditions are run one after another, so a run
            # stopped part-way holds every condition for the users it reached.
            jobs = [
                _Job(cond, self.memories[cond.name], user, self.sessions[user.id])
                for user in self.users
                for cond in self.conditions
            ]
            plans = {id(j): _plan(store, j, retry_errors) for j in jobs}
            skipped = sum(len(p.done) for p in plans.values())
            self.models.set_concurrency(self.config.concurrency)
            tally = _Tally(max_failures=max_failures)
            tally.retried = sum(p.retried for p in plans.values())
            with Progress(self.total_sessions, skipped, enabled=progress) as bar, _frozen_heap():
                tally.bar = bar
                await self._run_jobs(jobs, plans, store, tally)
            scores = self._scores(store.score_records())
        finally:
            store.close()
            lock.release()
        return RunResult(
            run_dir=self.config.run_dir,
            run_id=header.id,
            sessions_run=tally.sessions_run,
            sessions_skipped=skipped,
            errors=tally.errors,
            model_calls=tally.model_calls,
            cached_calls=tally.cached_calls,
            failed_calls=tally.failed_calls,
            retried=tally.retried,
            scores=scores,
        )

    def _as_stored(self, store: RunStore) -> ExperimentConfig:
        """The config to match against the run dir's header: a header stored with options
        as given (before runs stored them typed, defaults included) matches when the
        benchmark reads its options the same."""
        stored = store.run_or_none()
        model = type(self.benchmark).options_model
        if stored is None or model is None or stored.config.options == self.config.options:
            return self.config
        try:
            read = model.model_validate(stored.config.options).model_dump(mode="json")
        except ValueError:
            return self.config
        same = read == self.config.options
        return (
            self.config.model_copy(update={"options": stored.config.options})
            if same
            else self.config
        )

    def _scores(self, records: list[SessionRecord]) -> dict[str, dict[str, Estimate]]:
        """The run's scores by condition, metrics in the benchmark's order."""
        seen = metric_names(records)
        metrics = [m for m in self.benchmark.metrics if m in seen] or seen
        table = condition_metrics(records, metrics)
        return {c.name: table[c.name] for c in self.conditions if c.name in table}

    async def _run_jobs(
        self, jobs: list[_Job], plans: dict[int, _Plan], store: RunStore, tally: _Tally
    ) -> None:
        # Every memory starts from what was stored, before any session runs: a memory its
        # users share hears all of their snapshots (the newest wins) before it is used.
        progress = {id(j): self._restore(j, plans[id(j)]) for j in jobs}
        for phase in sorted({s.phase for j in jobs for s in j.specs}):
            # `concurrency` workers take the jobs in order, each job's sessions of this phase.
            # Each worker is a lockstep participant of the embedded engine, so the calls it
            # batches together do not depend on thread timing.
            queue = [
                (index, job)
                for index, job in enumerate(jobs)
                if any(s.phase == phase and s.index not in plans[id(job)].done for s in job.specs)
            ][::-1]

            async def worker(queue: list[tuple[int, _Job]] = queue, phase: int = phase) -> None:
                with participant():
                    while queue:
                        index, job = queue.pop()
                        with call_key(index):
                            await self._run_user(job, progress[id(job)], store, tally, phase)

            workers = min(self.config.concurrency, len(queue))
            tasks = [asyncio.ensure_future(worker()) for _ in range(workers)]
            try:
                await asyncio.gather(*tasks)
            finally:
                # On an interrupt or a crash, stop the others; what they committed stays.
                for task in tasks:
                    task.cancel()
                await asyncio.gather(*tasks, return_exceptions=True)

    def _restore(self, job: _Job, plan: _Plan) -> _Progress:
        """Load the job's stored memory (if any) into its condition's memory."""
        ref = self.user_ref(job.user, job.condition)
        if plan.memory is not None:
            job.memory.restore(ref, plan.memory.state)
            return _Progress(ref, plan.done, plan.memory, plan.memory.version)
        return _Progress(ref, plan.done, None, 0)

    async def _run_user(
        self, job: _Job, progress: _Progress, store: RunStore, tally: _Tally, phase: int
    ) -> None:
        name, ref = job.condition.name, progress.ref
        for spec in job.specs:
            if spec.index in progress.done or spec.phase != phase:
                continue
            record = await self._session(job, ref, spec, progress.version)
            progress.version = spec.index + 1
            latest = progress.latest
            state = latest.state if latest is not None else MemoryState()
            try:
                state = job.memory.snapshot(ref)
            except Exception as exc:
                record_failure(record, _failure("memory.snapshot", exc))
            snapshot = MemoryVersion(
                condition=name, user_id=job.user.id, version=progress.version, state=state
            )
            record = _commit(store, record, snapshot)
            progress.latest = snapshot
            self._count(record, tally)

    async def _session(
        self, job: _Job, ref: UserRef, spec: SessionSpec, version: int
    ) -> SessionRecord:
        try:
            return await play_session(
                self.benchmark,
                spec,
                job.user,
                models=self.models,
                memory=job.memory,
                condition=job.condition,
                ref=ref,
                memory_version=version,
                agent=self.agent_factory(self.models) if self.agent_factory else None,
            )
        except Exception as exc:
            # play_session records every failure; this is the net under it.
            record = _bare_record(job.condition, job.user, spec, version)
            record_failure(record, _failure("runner", exc))
            return record

    @staticmethod
    def _count(record: SessionRecord, tally: _Tally) -> None:
        tally.sessions_run += 1
        tally.errors += record.status == "error"
        tally.model_calls += sum(not c.cached and c.error is None for c in record.usage)
        tally.cached_calls += sum(c.cached and c.error is None for c in record.usage)
        tally.failed_calls += sum(c.error is not None for c in record.usage)
        outage = [e for e in record.events_of(ErrorEvent) if e.error_type == "ModelError"]
        tally.consecutive_failures = tally.consecutive_failures + 1 if outage else 0
        if tally.max_failures and tally.consecutive_failures >= tally.max_failures:
            raise ProviderOutage(
                f"stopped after {tally.consecutive_failures} sessions in a row failed on a "
                f"model provider (last, {outage[-1].where}: {outage[-1].message[:160]}); "
                f"{tally.sessions_run} sessions of this invocation are kept; run the same "
                "command again to resume"
            )
        if tally.bar is not None:
            generated = sum(c.completion_tokens for c in record.usage if not c.cached)
            tally.bar.advance(errors=tally.errors, tokens=generated)


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
    record = SessionRecord(
        condition=condition.name,
        user_id=user.id,
        index=spec.index,
        spec_id=spec.id,
        split=spec.split,
        memory_version=memory_version,
    )
    with record_calls() as calls:
        await _play(benchmark, spec, user, models, memory, condition, ref, record, agent)
        if spec.learn and record.status == "ok":
            try:
                await guarded("memory.learn", memory.learn(ref, record))
            except SessionFailure as failure:
                record_failure(record, failure)
    record.usage = list(calls)
    record.finished_at = time.time()
    return record


async def _play(
    benchmark: Benchmark,
    spec: SessionSpec,
    user: UserSpec,
    models: ModelRoles,
    memory: Memory,
    condition: Condition,
    ref: UserRef,
    record: SessionRecord,
    agent: Agent | None = None,
) -> None:
    try:
        episode = benchmark.episode(spec, user, models, condition)
    except Exception as exc:
        record_failure(record, _failure("benchmark", exc))
        return
    agent = agent if agent is not None else Agent(models.get("agent"))
    await Orchestrator(agent, memory, ref).play(episode, record)
    record.memory_health = memory.health(ref)
    try:
        record.scores = dict(benchmark.score(record))
    except Exception as exc:
        record_failure(record, _failure("score", exc))


@dataclass
class _Progress:
    """Where one user's sessions under one condition stand during a run."""

    ref: UserRef
    done: set[int]
    latest: MemoryVersion | None
    """The newest memory version stored for the user (None: none yet)."""
    version: int
    """The memory version the user's next session starts from."""


@dataclass
class _Plan:
    """Where one user's sessions under one condition resume."""

    done: set[int]
    """Session indices that are kept (not run again)."""
    memory: MemoryVersion | None
    """The memory version to start from (None: a fresh memory)."""
    retried: int = 0


@contextlib.contextmanager
def _frozen_heap() -> Iterator[None]:
    """Keep what exists before the sessions start out of the garbage collector's passes
    while they run.

    The imported libraries and the prepared experiment are some 10^5 objects; a full
    collection walks all of them and stalls the event loop for tens of milliseconds, with
    every session in flight waiting. A heap the caller froze is left as it is.
    """
    if gc.get_freeze_count():
        yield
        return
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()


def _plan(store: RunStore, job: _Job, retry_errors: bool) -> _Plan:
    """Stored sessions are kept; with ``retry_errors``, a user's sessions from the first
    error on are run again, from the memory as it was before that session."""
    name, user = job.condition.name, job.user.id
    done = store.done(name, user)
    errors = store.error_indices(name, user) if retry_errors else set()
    if not errors:
        return _Plan(done, store.latest_memory(name, user))
    first = min(errors)
    memory = store.memory_version(name, user, first) if first > 0 else None
    if first > 0 and memory is None:
        # No snapshot before the first error: start the user over.
        first = 0
    kept = {i for i in done if i < first}
    return _Plan(kept, memory, retried=len(errors))


def _bare_record(
    condition: Condition, user: UserSpec, spec: SessionSpec, version: int
) -> SessionRecord:
    return SessionRecord(
        condition=condition.name,
        user_id=user.id,
        index=spec.index,
        spec_id=spec.id,
        split=spec.split,
        memory_version=version,
        finished_at=time.time(),
    )


def _commit(store: RunStore, record: SessionRecord, snapshot: MemoryVersion) -> SessionRecord:
    """Commit a session; one the store cannot take is committed as an error in its place.

    A record or memory state that cannot be serialized (too deep, invalid text that slipped
    past the provider boundary) must not stop the run: the session is kept with status
    ``error``, its usage and an event saying why, without the parts that failed.
    """
    try:
        store.commit_session(record, snapshot)
        return record
    except Exception as exc:
        failure = _failure("store", exc)
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
    record_failure(bare, failure)
    try:
        store.commit_session(bare, snapshot)
    except Exception:
        # The memory state itself is what cannot be stored: keep the one before.
        previous = store.latest_memory(snapshot.condition, snapshot.user_id)
        state = previous.state if previous is not None else MemoryState()
        store.commit_session(bare, snapshot.model_copy(update={"state": state}))
    return bare


def _failure(where: str, exc: Exception) -> SessionFailure:
    return SessionFailure(where, one_line(exc), error_type=type(exc).__name__)
