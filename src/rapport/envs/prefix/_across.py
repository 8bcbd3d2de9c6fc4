"""The paper's tables across agent models (Tables 2 to 5), from several runs, one per
agent model, each figure computed the paper's way.

Table 2 (UX): per model and condition, the mean over samples of each UX dimension; a
model's ``Avg`` is the mean of its dimensions and its gain is ``(P - No_P) / No_P``. The
paper's headline UX gain (7.6%) is the **mean of the per-model gains**. Table 3
(alignment): per model the mean over samples; the ``Avg`` row is the mean of the models'
means and its gain (the paper's 18.5%) is the **gain of those means**, not the mean of
the per-model gains: the two headlines are computed differently, and both forms are shown.
Table 4: ICC(2,1) and ICC(2,k) per dimension, targets model x condition x setting x
sample and raters the judges, with Cronbach's alpha over the judged dimensions on each
sample's mean across judges (PrefIX's ``llm_as_judge_consensus_multimodel`` notebook).
Table 5: each judge's mean std and mean CV over its repeated runs.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Mapping, Sequence

import numpy as np

from rapport.judges import cronbach_alpha_ci, icc2, judge_means_from_events, run_spread
from rapport.log import JudgeEvent, SessionRecord, Table

from ._report import headline_events, judged_dimensions
from ._rubric import ALIGNMENT_IDS

Row = list[str | int | float | None]
Runs = Mapping[str, Sequence[SessionRecord]]
"""Agent model label -> that run's session records."""
CONDITIONS = ("no_p", "p")


def _r(value: float) -> float | None:
    return None if math.isnan(value) else round(value, 3)


def _mean(values: Sequence[float]) -> float:
    clean = [v for v in values if not math.isnan(v)]
    return sum(clean) / len(clean) if clean else math.nan


def _gain(value: float, base: float) -> float:
    if math.isnan(value) or math.isnan(base) or base == 0:
        return math.nan
    return 100 * (value - base) / base


def _prompting(record: SessionRecord) -> str:
    return record.condition.partition("+")[0]


def _scored(records: Sequence[SessionRecord]) -> list[SessionRecord]:
    return [r for r in records if r.split == "eval" and "accuracy" in r.scores]


def condition_mean(records: Sequence[SessionRecord], condition: str, metric: str) -> float:
    """The mean over a condition's samples of one score."""
    return _mean(
        [r.scores.get(metric, math.nan) for r in _scored(records) if _prompting(r) == condition]
    )


def ux_table(runs: Runs) -> Table:
    """Table 2: each UX dimension per model and condition, the models' averages and gains,
    and the headline gain both ways."""
    all_records = [r for records in runs.values() for r in records]
    dims = [d for d in judged_dimensions(all_records) if d not in ALIGNMENT_IDS]
    rows: list[Row] = []
    for d in dims:
        rows.append(
            [d, *(_r(condition_mean(runs[m], c, f"ux.{d}")) for m in runs for c in CONDITIONS)]
        )
    averages = {
        (m, c): _mean([condition_mean(runs[m], c, f"ux.{d}") for d in dims])
        for m in runs
        for c in CONDITIONS
    }
    rows.append(["Avg", *(_r(averages[m, c]) for m in runs for c in CONDITIONS)])
    gains = {m: _gain(averages[m, "p"], averages[m, "no_p"]) for m in runs}
    rows.append(["Gain %", *(v for m in runs for v in (_r(gains[m]), None))])
    cross = _gain(
        _mean([averages[m, "p"] for m in runs]), _mean([averages[m, "no_p"] for m in runs])
    )
    blank = [None] * (2 * len(runs) - 1)
    rows.append(
        [
            "UX gain %: mean of the models' gains (the paper's)",
            _r(_mean(list(gains.values()))),
            *blank,
        ]
    )
    rows.append(["UX gain %: gain of the models' means", _r(cross), *blank])
    columns = ["dimension", *(f"{m} {c}" for m in runs for c in CONDITIONS)]
    return Table(
        title="PrefIx Table 2: UX per dimension and agent model", columns=columns, rows=rows
    )


def alignment_table(runs: Runs) -> Table:
    """Table 3: preference alignment per model with its gain, the ``Avg`` row as the
    paper computes it (gain of the means), and the mean of the gains beside it."""
    rows: list[Row] = []
    means = {(m, c): condition_mean(runs[m], c, "alignment") for m in runs for c in CONDITIONS}
    gains = []
    for m in runs:
        gain = _gain(means[m, "p"], means[m, "no_p"])
        gains.append(gain)
        rows.append([m, _r(means[m, "no_p"]), _r(means[m, "p"]), _r(gain)])
    avg_no = _mean([means[m, "no_p"] for m in runs])
    avg_p = _mean([means[m, "p"] for m in runs])
    rows.append(
        ["Avg (gain of the means: the paper's)", _r(avg_no), _r(avg_p), _r(_gain(avg_p, avg_no))]
    )
    rows.append(["mean of the models' gains", None, None, _r(_mean(gains))])
    columns = ["agent model", "no_p", "p", "gain %"]
    return Table(
        title="PrefIx Table 3: preference alignment per agent model", columns=columns, rows=rows
    )


def _targets(runs: Runs) -> list[tuple[str, SessionRecord]]:
    return [(m, r) for m, records in runs.items() for r in _scored(records)]


def reliability_table(runs: Runs) -> Table:
    """Table 4: ICC per dimension over every model's samples, and alpha with its CI."""
    targets = _targets(runs)
    records = [r for _m, r in targets]
    dims = judged_dimensions(records)
    cells: dict[str, dict[tuple[int, str], list[float]]] = defaultdict(dict)
    for i, (_m, r) in enumerate(targets):
        for e in headline_events(r):
            cells[e.dimension].setdefault((i, e.judge), []).append(e.score)
    judges = sorted({j for by in cells.values() for (_i, j) in by})
    rows: list[Row] = []
    for d in dims:
        matrix = [[_mean(cells[d].get((i, j), [])) for j in judges] for i in range(len(targets))]
        matrix = [row for row in matrix if not all(math.isnan(v) for v in row)]
        single, average = icc2(np.array(matrix)) if matrix else (math.nan, math.nan)
        rows.append([d, len(matrix), _r(single), _r(average)])
    items = [
        [means.get(d, math.nan) for d in dims]
        for means in (judge_means_from_events(headline_events(r)) for r in records)
        if means
    ]
    alpha, low, high = cronbach_alpha_ci(np.array(items)) if items else (math.nan,) * 3
    ci = "" if math.isnan(low) else f" (95% CI [{low:.3f}, {high:.3f}])"
    rows.append(
        [f"Cronbach's alpha over the {len(dims)} dimensions{ci}", len(items), _r(alpha), None]
    )
    columns = ["dimension", "samples", "ICC(2,1)", "ICC(2,k)"]
    return Table(
        title="PrefIx Table 4: judge agreement across agent models", columns=columns, rows=rows
    )


def spread_table(runs: Runs) -> Table:
    """Table 5: each judge's mean std and mean CV over repeated runs of the same sample
    and dimension, over every model's runs."""
    items: dict[str, list[list[float]]] = defaultdict(list)
    for records in runs.values():
        for r in records:
            by: dict[tuple[str, str], list[float]] = defaultdict(list)
            for e in r.events_of(JudgeEvent):
                by[(e.judge, e.dimension)].append(e.score)
            for (judge, _d), scores in by.items():
                if len(scores) >= 2:
                    items[judge].append(scores)
    rows: list[Row] = []
    for judge in sorted(items):
        std, cv = run_spread(items[judge])
        rows.append(
            [judge, len(items[judge]), _r(std), None if math.isnan(cv) else f"{100 * cv:.2f}%"]
        )
    columns = ["judge", "items with repeated runs", "mean std", "mean CV"]
    return Table(title="PrefIx Table 5: judges' run-to-run spread", columns=columns, rows=rows)


def across_models(runs: Runs) -> list[Table]:
    """Tables 2 to 5 of the paper over several runs, one per agent model."""
    return [ux_table(runs), alignment_table(runs), reliability_table(runs), spread_table(runs)]
