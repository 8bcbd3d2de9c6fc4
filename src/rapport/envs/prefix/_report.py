"""PrefIx report tables: accuracy and UX per condition, per dimension, alignment gains by
dimension group, and the judges' reliability."""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Sequence

import numpy as np

from rapport.judges import cronbach_alpha_ci, icc2, judge_means_from_events, run_spread
from rapport.log import JudgeEvent, SessionRecord, Table

from ._rubric import ALIGNMENT_IDS
from ._settings import dimensions
from ._types import PrefixOutcome

Row = list[str | int | float | None]


def _table(title: str, columns: list[str], rows: list[Row]) -> Table:
    return Table(title=title, columns=columns, rows=rows)


def _r(value: float) -> float | None:
    return None if math.isnan(value) else round(value, 4)


def _mean(values: Sequence[float]) -> float:
    clean = [v for v in values if not math.isnan(v)]
    return sum(clean) / len(clean) if clean else math.nan


def _gain(value: float, base: float) -> float:
    return (
        math.nan
        if math.isnan(value) or math.isnan(base) or base == 0
        else 100 * (value - base) / base
    )


def _scored(records: Sequence[SessionRecord]) -> list[SessionRecord]:
    return [r for r in records if r.split == "eval" and "accuracy" in r.scores]


def _baseline(condition: str) -> str:
    """``p+reflection`` is compared with ``no_p+reflection``."""
    _prompting, _, memory = condition.partition("+")
    return f"no_p+{memory}" if memory else "no_p"


def _by_condition(records: Sequence[SessionRecord], metric: str) -> dict[str, float]:
    values: dict[str, list[float]] = defaultdict(list)
    for r in records:
        values[r.condition].append(r.scores.get(metric, math.nan))
    return {c: _mean(v) for c, v in values.items()}


SUMMARY = ("accuracy", "bfcl_pass", "ux", "alignment")
"""Headline metrics, each a mean over the condition's samples (the paper's averaging):
tool-use accuracy (the share of reference calls made), bfcl-eval's per-turn pass beside
it, UX (seven dimensions), preference alignment."""


def summary_table(records: Sequence[SessionRecord], dropped: dict[str, int]) -> Table:
    """Accuracy, UX and alignment per condition, with the gain in % over the same memory
    without p."""
    per = {m: _by_condition(records, m) for m in SUMMARY}
    counts: dict[str, int] = defaultdict(int)
    for r in records:
        counts[r.condition] += 1
    rows: list[Row] = []
    for c in sorted(set(per["accuracy"]) | set(dropped)):
        values = [per[m].get(c, math.nan) for m in SUMMARY]
        base = _baseline(c)
        gains = [
            math.nan if base == c else _gain(v, per[m].get(base, math.nan))
            for m, v in zip(SUMMARY, values, strict=True)
        ]
        rows.append(
            [c, counts[c], dropped.get(c, 0), *(_r(v) for v in values), *(_r(g) for g in gains)]
        )
    cols = ["condition", "sessions", "dropped", *SUMMARY, *(f"{m} gain %" for m in SUMMARY)]
    return _table("PrefIx: accuracy, UX (7 dimensions) and alignment per condition", cols, rows)


def setting_table(records: Sequence[SessionRecord]) -> Table:
    """The headline metrics per setting (the settings a user holds) and condition: each a
    mean over that setting's samples."""
    groups: dict[tuple[str, str], list[SessionRecord]] = defaultdict(list)
    for r in records:
        if isinstance(r.outcome, PrefixOutcome):
            groups[("+".join(r.outcome.settings), r.condition)].append(r)
    rows: list[Row] = []
    for (setting, condition), group in sorted(groups.items()):
        means = [_mean([r.scores.get(m, math.nan) for r in group]) for m in SUMMARY]
        rows.append([setting, condition, len(group), *(_r(v) for v in means)])
    cols = ["setting", "condition", "samples", *SUMMARY]
    return _table("PrefIx: per-setting means", cols, rows)


def dimension_table(records: Sequence[SessionRecord]) -> Table:
    """Mean judge score per judged dimension (ours or the paper's ids) and condition."""
    conditions = sorted({r.condition for r in records})
    rows: list[Row] = []
    for d in judged_dimensions(records):
        metric = "alignment" if d in ALIGNMENT_IDS else f"ux.{d}"
        per = _by_condition(records, metric)
        rows.append([d, *(_r(per.get(c, math.nan)) for c in conditions)])
    return _table("PrefIx: judge score per dimension (1-5)", ["dimension", *conditions], rows)


def _alignment_means(records: Sequence[SessionRecord], dim: str, metric: str) -> dict[str, float]:
    """Condition -> mean of one alignment metric over the settings of one dimension group."""
    values: dict[str, list[float]] = defaultdict(list)
    for r in records:
        alignment = r.outcome.alignment if isinstance(r.outcome, PrefixOutcome) else []
        for entry in alignment:
            value = entry.precision if metric == "precision" else entry.recall
            if entry.dimension == dim and value is not None:
                values[r.condition].append(value)
    return {c: _mean(v) for c, v in values.items()}


def alignment_table(records: Sequence[SessionRecord]) -> Table:
    """Alignment precision and recall per dimension group and condition, with gains."""
    rows: list[Row] = []
    for dim in dimensions():
        for metric in ("precision", "recall"):
            per = _alignment_means(records, dim, metric)
            for c in sorted(per):
                base = _baseline(c)
                gain = math.nan if base == c else _gain(per[c], per.get(base, math.nan))
                rows.append([dim, f"align_{metric}", c, _r(per[c]), _r(gain)])
    cols = ["dimension group", "metric", "condition", "mean", "gain %"]
    return _table("PrefIx: preference alignment per dimension group", cols, rows)


Cells = dict[str, dict[tuple[int, str], list[float]]]


def headline_events(record: SessionRecord) -> list[JudgeEvent]:
    """The judge events a session's headline scores come from: every repeat under the
    ``repeats`` protocol; under the paper's, only the first run (its extra runs measure
    the judges' stability and stay out of the scores, as in the paper's Section 6)."""
    events = record.events_of(JudgeEvent)
    paper = isinstance(record.outcome, PrefixOutcome) and record.outcome.reliability == "paper"
    return [e for e in events if e.repeat == 0] if paper else events


def judged_dimensions(records: Sequence[SessionRecord]) -> list[str]:
    """The dimension ids the judges scored, in the rubric's order (first seen): ours or,
    with ``--rubric-from``, the paper's."""
    seen: dict[str, None] = {}
    for r in records:
        for e in r.events_of(JudgeEvent):
            seen.setdefault(e.dimension, None)
    return list(seen)


def _judge_cells(records: Sequence[SessionRecord], *, every_run: bool = False) -> Cells:
    """Dimension -> (record position, judge) -> that judge's scores (its headline runs, or
    every run)."""
    cells: Cells = defaultdict(dict)
    for i, r in enumerate(records):
        for e in r.events_of(JudgeEvent) if every_run else headline_events(r):
            cells[e.dimension].setdefault((i, e.judge), []).append(e.score)
    return cells


def _icc_row(name: str, matrix: list[list[float]]) -> Row:
    matrix = [row for row in matrix if not all(math.isnan(v) for v in row)]
    single, average = icc2(np.array(matrix)) if matrix else (math.nan, math.nan)
    return [f"ICC {name}", len(matrix), _r(single), _r(average), None]


def _icc_rows(cells: Cells, dims: list[str], judges: list[str], n_records: int) -> list[Row]:
    """ICC(2,1) and ICC(2,k) per dimension (targets: the sessions; raters: the judges)."""

    def score(dim: str, i: int, j: str) -> float:
        return _mean(cells.get(dim, {}).get((i, j), []))

    return [
        _icc_row(dim, [[score(dim, i, j) for j in judges] for i in range(n_records)])
        for dim in dims
    ]


def _alpha_row(records: Sequence[SessionRecord], dims: list[str]) -> Row:
    """Cronbach's alpha over every judged dimension (the paper's 8 items: 7 UX and
    alignment) on each session's means across judges, with its 95% CI."""
    per_session = [judge_means_from_events(headline_events(r)) for r in records]
    items = [[s.get(d, math.nan) for d in dims] for s in per_session if s]
    alpha, low, high = cronbach_alpha_ci(np.array(items)) if items else (math.nan,) * 3
    ci = None if math.isnan(low) else f"[{low:.3f}, {high:.3f}]"
    return [f"alpha over the {len(dims)} judged dimensions", len(items), _r(alpha), None, ci]


def _protocol(records: Sequence[SessionRecord], cells: Cells) -> str:
    """Which judge-stability protocol the records ran, in words."""
    runs = Counter(len(v) for by in cells.values() for v in by.values())
    named = {r.outcome.reliability for r in records if isinstance(r.outcome, PrefixOutcome)}
    sampled = len({i for by in cells.values() for (i, _j), v in by.items() if len(v) >= 2})
    most = max(runs, default=0)
    if "paper" in named:
        return f"paper ({most} judge runs on {sampled} sessions, kept out of the scores)"
    return f"repeats ({most} judge runs on every session, averaged into the scores)"


def _spread_rows(cells: Cells, judges: list[str]) -> list[Row]:
    """Per judge, the mean std and mean CV over its repeated runs (the paper's Table 5):
    items are (session, dimension) pairs with at least two runs."""
    rows: list[Row] = []
    for judge in judges:
        runs = [v for by in cells.values() for (_i, j), v in by.items() if j == judge]
        items = [v for v in runs if len(v) >= 2]
        std, cv = run_spread(items)
        rows.append([f"mean std / mean CV over runs: {judge}", len(items), _r(std), _r(cv), None])
    return rows


def reliability_table(records: Sequence[SessionRecord]) -> Table:
    """ICC(2,1) and ICC(2,k) per dimension, alpha over the judged dimensions with its CI,
    and each judge's spread over repeated runs."""
    dims = judged_dimensions(records)
    cells = _judge_cells(records)
    judges = sorted({j for by in cells.values() for (_i, j) in by})
    rows = _icc_rows(cells, dims, judges, len(records))
    rows.append(_alpha_row(records, dims))
    every = _judge_cells(records, every_run=True)
    rows.append([f"run-to-run protocol: {_protocol(records, every)}", None, None, None, None])
    rows += _spread_rows(every, judges)
    cols = ["statistic", "n", "value (ICC(2,1) / alpha / mean std)", "ICC(2,k) / mean CV", "95% CI"]
    return _table("PrefIx: judge reliability", cols, rows)


NOT_RECORDED = "(not recorded)"


def task_data_table(records: Sequence[SessionRecord]) -> Table:
    """Per setting (the settings a user holds), which task data its tasks came from, where
    their coarse instructions came from, which rubric the judges ran and how accuracy
    matched calls, with the sessions of each."""
    counts: Counter[tuple[str, ...]] = Counter()
    for r in records:
        if isinstance(r.outcome, PrefixOutcome):
            accuracy = r.outcome.accuracy
            key = (
                "+".join(r.outcome.settings),
                r.outcome.task_data or NOT_RECORDED,
                r.outcome.instruction_source or NOT_RECORDED,
                r.outcome.rubric or NOT_RECORDED,
                accuracy.matching if accuracy is not None else NOT_RECORDED,
            )
            counts[key] += 1
    rows: list[Row] = [[*key, n] for key, n in counts.items()]
    cols = ["setting", "task data", "instructions", "judge rubric", "call matching", "sessions"]
    return _table("PrefIx: task data, instructions, judge rubric and call matching", cols, rows)


def report_tables(records: Sequence[SessionRecord]) -> list[Table]:
    """Every PrefIx table for a run's records."""
    scored = _scored(records)
    dropped: dict[str, int] = defaultdict(int)
    for r in records:
        dropped[r.condition] += isinstance(r.outcome, PrefixOutcome) and r.outcome.dropped
    return [
        summary_table(scored, dropped),
        setting_table(scored),
        dimension_table(scored),
        alignment_table(scored),
        reliability_table(scored),
        task_data_table(records),
    ]
