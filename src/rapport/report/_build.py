"""A run's report, built from its store alone: metrics with CIs, deltas, usage, errors."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from rapport.envs import Benchmark, UnknownBenchmarkError, benchmark_class
from rapport.eval import (
    DeltaPoint,
    Estimate,
    condition_metrics,
    eval_sessions,
    metric_names,
    pick_baseline,
    session_deltas,
)
from rapport.llm import redact_secrets
from rapport.log import ErrorEvent, Metric, Run, SessionRecord, Table
from rapport.store import RunStore

from ._curves import (
    CurvePoint,
    PairedDifference,
    paired_differences,
    series_curves,
    session_curves,
)
from ._describe import RunDescription, describe_run, planned_sessions


class TokenUsage(BaseModel):
    """Tokens one role used over the run."""

    prompt: int = 0
    completion: int = 0


class ErrorEntry(BaseModel):
    """One error event, located."""

    condition: str
    user_id: str
    session: int
    """The session number, counted from 1 (its stored ``index`` + 1)."""
    where: str
    message: str


class RepeatedError(BaseModel):
    """An error session that was played more than once (retried on resume)."""

    condition: str
    user_id: str
    session: int
    attempts: int


class Report(BaseModel):
    """Everything the report shows; `to_json` is the ``--format json`` output."""

    benchmark: str
    run_id: str
    run_dir: str
    conditions: dict[str, dict[str, Estimate]]
    """Condition -> metric -> mean over users with a 95% bootstrap CI (eval sessions)."""
    metrics: list[str]
    lower_is_better: list[str] = Field(default_factory=list)
    declared: list[Metric] = Field(default_factory=list, exclude=True)
    """How the benchmark declares each shown metric (empty: its code is absent); the text
    tables' titles read it (the JSON holds the numbers, as before)."""
    baseline: str | None = None
    deltas: dict[str, dict[str, list[DeltaPoint]]] = Field(default_factory=dict)
    """Condition -> metric -> (condition - baseline) by session index."""
    curves: dict[str, dict[str, list[CurvePoint]]] = Field(default_factory=dict)
    """Condition -> metric -> the metric by session index (absolute)."""
    paired: dict[str, dict[str, PairedDifference]] = Field(default_factory=dict)
    """Condition -> metric -> paired overall difference to the baseline, with its CI."""
    users: int = 0
    sessions: int = 0
    """All stored sessions (train and eval)."""
    planned_sessions: int | None = None
    """Sessions the run's last invocation set out to run (None: not recorded)."""
    eval_sessions: int = 0
    errors: int = 0
    """Error events over all sessions."""
    error_sessions: int = 0
    """Sessions with status ``error``."""
    error_list: list[ErrorEntry] = Field(default_factory=list)
    """Every error event (empty in a light report)."""
    repeated_errors: list[RepeatedError] = Field(default_factory=list)
    """Error sessions played more than once; a resume retries one only while it has been
    played fewer than ``--max-attempts`` times."""
    errors_by_condition: dict[str, int] = Field(default_factory=dict)
    """Condition -> error events (all splits)."""
    usage: dict[str, TokenUsage] = Field(default_factory=dict)
    model_calls: int = 0
    """Calls a model answered (cache hits and failures excluded)."""
    cached_calls: int = 0
    failed_calls: int = 0
    """Calls that failed (provider errors, outputs invalid after retries); never cached."""
    tables: list[Table] = Field(default_factory=list)
    description: RunDescription | None = None
    """The run's config, models, retrieval backends, packages and code revision."""
    series_origins: dict[str, tuple[str, int]] = Field(default_factory=dict, exclude=True)
    """Where a benchmark splits a condition's sessions into series (`curves` and `deltas`
    keyed ``condition · series``, by position): series -> its condition and the session
    index of its first position (for links to sessions; not in the JSON)."""

    @property
    def part_done(self) -> str:
        """One line saying the run is part-done and how to finish it ("" when it is not)."""
        planned = self.planned_sessions
        if planned is None or self.sessions >= planned:
            return ""
        return (
            f"Part-done: {self.sessions} of the {planned} planned sessions are stored; "
            "run the same command again to resume it."
        )

    def to_json(self) -> dict[str, Any]:
        """The JSON document of ``rapport report --format json``."""
        return self.model_dump(mode="json")


class _Hooks(BaseModel):
    metrics: list[str] | None = None
    lower_is_better: list[str] = Field(default_factory=list)
    declared: list[Metric] = Field(default_factory=list)
    tables: list[Table] = Field(default_factory=list)


def _benchmark_hooks(name: str, records: list[SessionRecord]) -> _Hooks:
    """What the benchmark's class says about its report; nothing when its code is absent
    (the report works from the store alone)."""
    try:
        cls: type[Benchmark] = benchmark_class(name)
    except (UnknownBenchmarkError, ImportError):
        return _Hooks()
    return _Hooks(
        metrics=list(cls.metrics) or None,
        lower_is_better=sorted(cls.lower_is_better),
        declared=list(cls.metric_declarations()),
        tables=list(cls.report_tables(records)),
    )


def _errors(records: Sequence[SessionRecord]) -> list[ErrorEntry]:
    return [
        ErrorEntry(
            condition=r.condition,
            user_id=r.user_id,
            session=r.index + 1,
            where=e.where,
            message=redact_secrets(e.message),
        )
        for r in records
        for e in r.events_of(ErrorEvent)
    ]


class Aggregates(BaseModel):
    """The numbers of a report that come from scores alone."""

    conditions: dict[str, dict[str, Estimate]]
    baseline: str | None
    deltas: dict[str, dict[str, list[DeltaPoint]]]
    curves: dict[str, dict[str, list[CurvePoint]]]
    paired: dict[str, dict[str, PairedDifference]]


def aggregate(
    records: Sequence[SessionRecord], metrics: Sequence[str], order: Sequence[str], *, seed: int = 0
) -> Aggregates:
    """Means with CIs, curves, deltas and paired differences of `metrics` over `records`."""
    table = condition_metrics(records, metrics, seed=seed)
    baseline = pick_baseline(order)
    deltas: dict[str, dict[str, list[DeltaPoint]]] = {}
    curves: dict[str, dict[str, list[CurvePoint]]] = {}
    paired: dict[str, dict[str, PairedDifference]] = {}
    for metric in metrics:
        for cond, points in session_curves(records, metric, seed=seed).items():
            curves.setdefault(cond, {})[metric] = points
        if baseline is None or len(order) < 2:
            continue
        for cond, delta in session_deltas(records, metric, baseline, seed=seed).items():
            deltas.setdefault(cond, {})[metric] = delta
        for cond, diff in paired_differences(records, metric, baseline, seed=seed).items():
            paired.setdefault(cond, {})[metric] = diff
    return Aggregates(
        conditions={c: table.get(c, {}) for c in order},
        baseline=baseline,
        deltas={c: deltas[c] for c in order if c in deltas},
        curves={c: curves[c] for c in order if c in curves},
        paired={c: paired[c] for c in order if c in paired},
    )


def build_report(run_dir: str | Path, *, seed: int = 0, light: bool = False) -> Report:
    """Read a run dir's store (read-only) and compute its report.

    Args:
        run_dir: the run dir.
        seed: the bootstrap seed.
        light: read scores only (no turns or events): no benchmark tables and no error list
            (error sessions are still counted). For large runs and the viewer.

    Raises:
        FileNotFoundError: the dir holds no run.
    """
    with RunStore.open_readonly(run_dir) as store:
        run = store.run_or_none()
        if run is None:
            raise FileNotFoundError(f"no run found in {run_dir} (its store holds no run header)")
        records = store.score_records() if light else store.sessions()
        usage = store.usage_by_role()
        users = store.user_count()
        invocations = store.invocations()
        description = describe_run(run, invocations, store.models_by_role())
        error_counts = store.error_counts() if light else {}
        repeated = [
            RepeatedError(condition=c, user_id=u, session=i, attempts=n)
            for (c, u, i), n in sorted(store.attempts(errors=True).items())
            if n > 1
        ]
    hooks = _benchmark_hooks(run.benchmark, [] if light else records)
    seen = metric_names(records)
    metrics = [m for m in hooks.metrics if m in seen] if hooks.metrics else seen
    order = _condition_order(run, records)
    numbers = aggregate(records, metrics, order, seed=seed)
    origins: dict[str, tuple[str, int]] = {}
    places = _series(run, records)
    if places is not None:
        split = series_curves(records, places, metrics, order, numbers.baseline, seed=seed)
        numbers.curves, numbers.deltas, origins = split.curves, split.deltas, split.origins
    errors = [] if light else _errors(records)
    if not light:
        for entry in errors:
            error_counts[entry.condition] = error_counts.get(entry.condition, 0) + 1
    return Report(
        benchmark=run.benchmark,
        run_id=run.id,
        run_dir=str(run_dir),
        metrics=metrics,
        lower_is_better=[m for m in hooks.lower_is_better if m in metrics],
        declared=[d for d in hooks.declared if d.name in metrics],
        users=users,
        sessions=len(records),
        planned_sessions=planned_sessions(invocations),
        eval_sessions=len(eval_sessions(records)),
        errors=sum(error_counts.values()),
        errors_by_condition=error_counts,
        error_sessions=sum(r.status == "error" for r in records),
        error_list=errors,
        repeated_errors=repeated,
        usage={
            role: TokenUsage(prompt=u.prompt_tokens, completion=u.completion_tokens)
            for role, u in usage.items()
        },
        model_calls=sum(u.calls - u.cached_calls - u.errors for u in usage.values()),
        cached_calls=sum(u.cached_calls for u in usage.values()),
        failed_calls=sum(u.errors for u in usage.values()),
        tables=[] if light else hooks.tables,
        description=description,
        series_origins=origins,
        **numbers.model_dump(),
    )


def _series(run: Run, records: Sequence[SessionRecord]) -> list[tuple[str, int] | None] | None:
    """The benchmark's series of its sessions (None: none, or its code is absent)."""
    try:
        cls: type[Benchmark] = benchmark_class(run.benchmark)
    except (UnknownBenchmarkError, ImportError):
        return None
    return cls.session_series(run.config, records)


def _condition_order(run: Run, records: Sequence[SessionRecord]) -> list[str]:
    """Conditions in the order the run named them, then any others seen in the store."""
    seen = list(dict.fromkeys(r.condition for r in records))
    named = [c.name for c in run.conditions] or list(run.config.memory)
    return [c for c in named if c in seen] + [c for c in seen if c not in named]
