"""Aggregation of session scores: per user first, then over users, with bootstrap CIs.

Users are the unit of analysis: a user with more sessions does not weigh more. Only
``eval`` sessions are aggregated; ``train`` sessions build memory and are not reported.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence

import numpy as np
from pydantic import BaseModel

from rapport._stats import LEVEL, RESAMPLES, bootstrap_interval
from rapport.log import ErrorEvent, SessionRecord

_CI = {"mean", "ci_low", "ci_high"}


class Estimate(BaseModel):
    """A mean over users and its bootstrap confidence interval."""

    mean: float
    ci_low: float
    ci_high: float
    sessions: int | None = None
    """Sessions the mean is over (set by `summarize`)."""
    errors: int = 0
    """Eval sessions of the same condition that ended with an error (not averaged)."""


class DeltaPoint(BaseModel):
    """Condition minus baseline at one session index, averaged over users."""

    index: int
    mean: float
    ci_low: float
    ci_high: float
    users: int


def bootstrap_ci(
    values: Sequence[float], *, resamples: int = RESAMPLES, seed: int = 0, level: float = LEVEL
) -> Estimate:
    """The mean of `values` with a percentile bootstrap CI (seeded, reproducible).

    The interval always contains the mean; constant values give a zero-width interval.

    Raises:
        ValueError: no values.
    """
    if len(values) == 0:
        raise ValueError("bootstrap_ci needs at least one value")
    low, high = bootstrap_interval(values, resamples=resamples, seed=seed, level=level)
    return Estimate(mean=_mean(values), ci_low=low, ci_high=high)


def eval_sessions(records: Iterable[SessionRecord]) -> list[SessionRecord]:
    """The sessions that are reported (``split == "eval"``)."""
    return [r for r in records if r.split == "eval"]


def per_user_means(records: Iterable[SessionRecord], metric: str) -> dict[str, float]:
    """Each user's mean of a metric over their eval sessions that have it."""
    by_user: dict[str, list[float]] = defaultdict(list)
    for record in eval_sessions(records):
        if metric in record.scores:
            by_user[record.user_id].append(record.scores[metric])
    return {user: _mean(values) for user, values in by_user.items()}


def _mean(values: Sequence[float]) -> float:
    # Identical values average to themselves exactly (np.mean can be off by an ulp).
    first = values[0]
    return float(first) if all(v == first for v in values) else float(np.mean(values))


def summarize(records: Iterable[SessionRecord], metric: str, *, seed: int = 0) -> Estimate | None:
    """Mean per user, then mean over users, with a bootstrap CI over users (None: no data)."""
    evals = eval_sessions(records)
    means = per_user_means(evals, metric)
    if not means:
        return None
    estimate = bootstrap_ci([means[u] for u in sorted(means)], seed=seed)
    return estimate.model_copy(
        update={
            "sessions": sum(metric in r.scores for r in evals),
            "errors": sum(r.status == "error" for r in evals),
        }
    )


def metric_names(records: Iterable[SessionRecord]) -> list[str]:
    """Every score key seen in eval sessions, in first-seen order."""
    seen: dict[str, None] = {}
    for record in eval_sessions(records):
        for key in record.scores:
            seen.setdefault(key, None)
    return list(seen)


def by_condition(records: Iterable[SessionRecord]) -> dict[str, list[SessionRecord]]:
    """Records grouped by condition, in first-seen order."""
    groups: dict[str, list[SessionRecord]] = {}
    for record in records:
        groups.setdefault(record.condition, []).append(record)
    return groups


def condition_metrics(
    records: Iterable[SessionRecord], metrics: Sequence[str] | None = None, *, seed: int = 0
) -> dict[str, dict[str, Estimate]]:
    """Condition -> metric -> estimate (metrics without data for a condition are left out)."""
    records = list(records)
    names = list(metrics) if metrics is not None else metric_names(records)
    table: dict[str, dict[str, Estimate]] = {}
    for condition, group in by_condition(records).items():
        row = {m: est for m in names if (est := summarize(group, m, seed=seed)) is not None}
        table[condition] = row
    return table


def pick_baseline(conditions: Sequence[str]) -> str | None:
    """The condition deltas are taken against: ``none`` if present, else the first."""
    if not conditions:
        return None
    return "none" if "none" in conditions else conditions[0]


def _scores_by_user_index(
    records: Iterable[SessionRecord], metric: str
) -> dict[tuple[str, int], float]:
    return {
        (r.user_id, r.index): r.scores[metric] for r in eval_sessions(records) if metric in r.scores
    }


def session_deltas(
    records: Iterable[SessionRecord], metric: str, baseline: str, *, seed: int = 0
) -> dict[str, list[DeltaPoint]]:
    """Per condition, the delta to the baseline by session index, paired by user.

    For each session index, each user contributes (condition score - baseline score) when
    both sessions exist; the deltas are averaged over users with a bootstrap CI.
    """
    groups = by_condition(records)
    base = _scores_by_user_index(groups.get(baseline, []), metric)
    result: dict[str, list[DeltaPoint]] = {}
    for condition, group in groups.items():
        if condition == baseline:
            continue
        diffs: dict[int, list[float]] = defaultdict(list)
        for (user, index), value in sorted(_scores_by_user_index(group, metric).items()):
            if (user, index) in base:
                diffs[index].append(value - base[(user, index)])
        result[condition] = [
            DeltaPoint(index=i, users=len(d), **bootstrap_ci(d, seed=seed).model_dump(include=_CI))
            for i, d in sorted(diffs.items())
        ]
    return result


def error_counts(records: Iterable[SessionRecord]) -> dict[str, int]:
    """Condition -> number of error events (all splits)."""
    counts: dict[str, int] = {}
    for record in records:
        counts[record.condition] = counts.get(record.condition, 0) + len(
            record.events_of(ErrorEvent)
        )
    return counts
