"""The experiment runner: conditions x users, each user's sessions in order, one commit each.

`Experiment.run` schedules the sessions that are not yet stored (a prepared experiment: see
`_prepare.prepare_experiment`), which makes re-running the same command a resume. Where a
resume starts is `_resume`; which sessions play at once, and what of a session runs aside, is
`_schedule`; one session's life (play, score, learn, snapshot, commit) is `_lifecycle`; what
an invocation counts, and when an outage stops it, is `_failures`.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from pydantic import BaseModel, Field

from rapport.envs import Benchmark
from rapport.llm import ModelRoles
from rapport.log import (
    Condition,
    ExperimentConfig,
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

from ._failures import MAX_CONSECUTIVE_FAILURES, Tally
from ._heap import frozen_heap
from ._lifecycle import AgentFactory, UserTrack
from ._metrics import Estimate, condition_metrics, metric_names
from ._orchestrator import one_line
from ._progress import Progress
from ._provenance import describe_invocation
from ._resume import MAX_ATTEMPTS, ResumePlan, exhausted, plan_resume
from ._schedule import KEY_STRIDE, Scheduler, Unit, forked, learns, versions_before


class ExperimentError(ValueError):
    """The experiment cannot start (bad name, option, model or data); nothing was written."""


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
    error_sessions: int = 0
    """Sessions stored with status ``error`` when this invocation ended (all conditions)."""
    exhausted: int = 0
    """Of those, the ones played ``max_attempts`` times: a resume keeps them as they are."""
    max_attempts: int = MAX_ATTEMPTS
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
        max_attempts: int = MAX_ATTEMPTS,
    ) -> RunResult:
        """Run every session not yet stored; commit each one as it finishes.

        Args:
            progress: show a progress bar.
            retry_errors: run stored error sessions again (from a user's first error on,
                with the memory as it was before it); ``False`` keeps them.
            max_failures: stop after this many sessions in a row failed on a model
                provider (0: never stop).
            max_attempts: an error session played this many times is kept as it is, not
                retried (0: no limit).

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
            return await self._run(store, progress, retry_errors, max_failures, max_attempts)
        finally:
            store.close()
            lock.release()

    async def _run(
        self,
        store: RunStore,
        progress: bool,
        retry_errors: bool,
        max_failures: int,
        max_attempts: int,
    ) -> RunResult:
        try:
            header = store.create_or_open(self._as_stored(store), self.conditions)
        except ConfigMismatchError as exc:
            raise ExperimentError(str(exc)) from exc
        store.add_invocation(describe_invocation(self))
        store.put_users(
            [UserRecord(user_id=u.id, spec=u.model_dump(mode="json")) for u in self.users]
        )
        jobs = self._jobs()
        plans = {
            id(j): plan_resume(
                store,
                j.condition.name,
                j.user.id,
                retry_errors=retry_errors,
                max_attempts=max_attempts,
            )
            for j in jobs
        }
        skipped = sum(len(p.done) for p in plans.values())
        self.models.set_concurrency(self.config.concurrency)
        tally = Tally(max_failures=max_failures, retried=sum(p.retried for p in plans.values()))
        with Progress(self.total_sessions, skipped, enabled=progress) as bar, frozen_heap():
            await self._run_jobs(jobs, plans, store, tally, bar)
        scores = self._scores(store.score_records())
        errors = store.attempts(errors=True).values()
        return RunResult(
            run_dir=self.config.run_dir,
            run_id=header.id,
            sessions_skipped=skipped,
            error_sessions=len(errors),
            exhausted=sum(exhausted(n, max_attempts) for n in errors),
            max_attempts=max_attempts,
            scores=scores,
            **tally.counts(),
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

    def _jobs(self) -> list[_Job]:
        # User-major: each user's conditions are run one after another, so a run
        # stopped part-way holds every condition for the users it reached.
        return [
            _Job(cond, self.memories[cond.name], user, self.sessions[user.id])
            for user in self.users
            for cond in self.conditions
        ]

    async def _run_jobs(
        self,
        jobs: list[_Job],
        plans: dict[int, ResumePlan],
        store: RunStore,
        tally: Tally,
        bar: Progress,
    ) -> None:
        # Every memory starts from what was stored, before any session runs: a memory its
        # users share hears all of their snapshots (the newest wins) before it is used.
        tracks = {id(j): self._restore(j, plans[id(j)]) for j in jobs}
        aside = self.config.concurrency > 1
        scheduler = Scheduler(
            self.benchmark, self.models, store, tally, bar, self.agent_factory, aside=aside
        )
        for phase in sorted({s.phase for j in jobs for s in j.specs}):
            units = [
                unit
                for index, job in enumerate(jobs)
                for unit in self._units(job, tracks[id(job)], plans[id(job)], phase, index)
            ]
            await scheduler.run(units, min(self.config.concurrency, len(units)))

    def _units(
        self, job: _Job, track: UserTrack, plan: ResumePlan, phase: int, index: int
    ) -> list[Unit]:
        """The job's sessions of the phase still to play: one unit, or (sessions that do not
        depend on each other, played concurrently) one unit each."""
        specs = [s for s in job.specs if s.phase == phase and s.index not in plan.done]
        key = index * KEY_STRIDE
        if not specs:
            return []
        if self.config.concurrency == 1 or learns(track.memory):
            return [Unit(track, specs, key)]
        versions = versions_before(job.specs)
        return [Unit(forked(track, versions[s.index]), [s], key) for s in specs]

    def _restore(self, job: _Job, plan: ResumePlan) -> UserTrack:
        """Load the job's stored memory (if any) into its condition's memory."""
        ref = self.user_ref(job.user, job.condition)
        if plan.memory is not None:
            job.memory.restore(ref, plan.memory.state)
        version = plan.memory.version if plan.memory is not None else 0
        return UserTrack(job.condition, job.memory, job.user, ref, plan.done, plan.memory, version)
