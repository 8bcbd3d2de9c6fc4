"""Per-session curves (absolute, by session index) and the paired overall difference to the
baseline, both averaged over users with bootstrap CIs; curves and differences split into a
benchmark's series (`series_curves`)."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence

from pydantic import BaseModel

from rapport.eval import DeltaPoint, bootstrap_ci, by_condition, eval_sessions, session_deltas
from rapport.log import SessionRecord

_CI = {"mean", "ci_low", "ci_high"}


class CurvePoint(BaseModel):
    """A metric at one session index under one condition, averaged over users."""

    index: int
    """The session index (0-based; plots label it ``index + 1``)."""
    mean: float
    ci_low: float
    ci_high: float
    users: int


class PairedDifference(BaseModel):
    """Condition minus baseline over the whole run, paired by user and session.

    Each user's differences on the sessions both conditions have are averaged; the mean of
    those per-user means over users carries a bootstrap CI (users are the unit).
    """

    mean: float
    ci_low: float
    ci_high: float
    users: int
    sessions: int
    """Session pairs that entered."""


def session_curves(
    records: Iterable[SessionRecord], metric: str, *, seed: int = 0
) -> dict[str, list[CurvePoint]]:
    """Condition -> the metric by session index (eval sessions), mean over users with a CI."""
    curves: dict[str, list[CurvePoint]] = {}
    for condition, group in by_condition(eval_sessions(records)).items():
        by_index: dict[int, list[float]] = defaultdict(list)
        for record in group:
            if metric in record.scores:
                by_index[record.index].append(record.scores[metric])
        points = [
            CurvePoint(index=i, users=len(v), **bootstrap_ci(v, seed=seed).model_dump(include=_CI))
            for i, v in sorted(by_index.items())
        ]
        if points:
            curves[condition] = points
    return curves


def paired_differences(
    records: Iterable[SessionRecord], metric: str, baseline: str, *, seed: int = 0
) -> dict[str, PairedDifference]:
    """Condition -> its paired overall difference to `baseline` (conditions with no pair are
    left out)."""
    groups = by_condition(eval_sessions(records))
    base = {
        (r.user_id, r.index): r.scores[metric]
        for r in groups.get(baseline, [])
        if metric in r.scores
    }
    result: dict[str, PairedDifference] = {}
    for condition, group in groups.items():
        if condition == baseline:
            continue
        per_user: dict[str, list[float]] = defaultdict(list)
        for r in group:
            if metric in r.scores and (r.user_id, r.index) in base:
                per_user[r.user_id].append(r.scores[metric] - base[(r.user_id, r.index)])
        if not per_user:
            continue
        means = [sum(v) / len(v) for _, v in sorted(per_user.items())]
        estimate = bootstrap_ci(means, seed=seed)
        result[condition] = PairedDifference(
            users=len(means),
            sessions=sum(len(v) for v in per_user.values()),
            **estimate.model_dump(include=_CI),
        )
    return result


class SeriesCurves(BaseModel):
    """Curves and differences to the baseline with a condition's sessions split into
    series (a study's study types), each named ``condition · series`` and indexed by the
    session's position in its series."""

    curves: dict[str, dict[str, list[CurvePoint]]]
    deltas: dict[str, dict[str, list[DeltaPoint]]]
    origins: dict[str, tuple[str, int]]
    """Series name -> its condition and the session index of its first position."""


def series_curves(
    records: Sequence[SessionRecord],
    places: Sequence[tuple[str, int] | None],
    metrics: Sequence[str],
    order: Sequence[str],
    baseline: str | None,
    *,
    seed: int = 0,
) -> SeriesCurves:
    """Per (condition, series): the metric by position (mean over users, CI) and, paired by
    user and position, its difference to the baseline's same series."""
    moved: dict[str, list[SessionRecord]] = defaultdict(list)
    origins: dict[str, tuple[str, int]] = {}
    for record, place in zip(records, places, strict=True):
        if place is not None:
            label, position = place
            name = f"{record.condition} · {label}"
            moved[label].append(record.model_copy(update={"condition": name, "index": position}))
            origins.setdefault(name, (record.condition, record.index - position))
    names = [f"{c} · {label}" for c in order for label in moved]
    curves: dict[str, dict[str, list[CurvePoint]]] = defaultdict(dict)
    deltas: dict[str, dict[str, list[DeltaPoint]]] = defaultdict(dict)
    for label, group in moved.items():
        for metric in metrics:
            for name, points in session_curves(group, metric, seed=seed).items():
                curves[name][metric] = points
            if baseline is None or len(order) < 2:
                continue
            base = f"{baseline} · {label}"
            for name, delta in session_deltas(group, metric, base, seed=seed).items():
                if delta:
                    deltas[name][metric] = delta
    return SeriesCurves(
        curves={n: curves[n] for n in names if n in curves},
        deltas={n: deltas[n] for n in names if n in deltas},
        origins={n: origins[n] for n in names if n in origins},
    )
