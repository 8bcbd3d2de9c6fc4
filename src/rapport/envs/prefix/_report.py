"""PrefIx report tables: accuracy and UX per condition, per dimension, alignment gains by
dimension group, and the judges' reliability."""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Sequence

import numpy as np

from rapport.judges import coefficient_of_variation, cronbach_alpha, icc2, judge_means_from_events
from rapport.log import JudgeEvent, SessionRecord, Table

from ._options import ALIGNMENT_DIMENSION, experience_dimensions
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
    """Mean judge score per UX dimension and condition."""
    conditions = sorted({r.condition for r in records})
    rows: list[Row] = []
    for d in experience_dimensions():
        per = _by_condition(records, f"ux.{d}")
        rows.append([d, *(_r(per.get(c, math.nan)) for c in conditions)])
    per = _by_condition(records, "alignment")
    rows.append([ALIGNMENT_DIMENSION, *(_r(per.get(c, math.nan)) for c in conditions)])
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


def _judge_cells(records: Sequence[SessionRecord]) -> Cells:
    """Dimension -> (record position, judge) -> that judge's scores over repeats."""
    cells: Cells = defaultdict(dict)
    for i, r in enumerate(records):
        for e in r.events_of(JudgeEvent):
            cells[e.dimension].setdefault((i, e.judge), []).append(e.score)
    return cells


def _icc_row(name: str, matrix: list[list[float]]) -> Row:
    matrix = [row for row in matrix if not all(math.isnan(v) for v in row)]
    single, average = icc2(np.array(matrix)) if matrix else (math.nan, math.nan)
    return [f"ICC {name}", len(matrix), _r(single), _r(average)]


def _icc_rows(cells: Cells, judges: list[str], n_records: int) -> list[Row]:
    """ICC per dimension, then of the UX score (each judge's mean of the 7 UX dimensions)."""

    def score(dim: str, i: int, j: str) -> float:
        return _mean(cells.get(dim, {}).get((i, j), []))

    rows = [
        _icc_row(dim, [[score(dim, i, j) for j in judges] for i in range(n_records)])
        for dim in sorted(cells)
    ]
    ux = [
        [_mean([score(d, i, j) for d in experience_dimensions()]) for j in judges]
        for i in range(n_records)
    ]
    rows.append(_icc_row("ux (mean of the 7 UX dimensions)", ux))
    return rows


def _protocol(records: Sequence[SessionRecord], cells: Cells) -> str:
    """Which judge-stability protocol the records ran, in words."""
    runs = Counter(len(v) for by in cells.values() for v in by.values())
    named = {r.outcome.reliability for r in records if isinstance(r.outcome, PrefixOutcome)}
    sampled = len({i for by in cells.values() for (i, _j), v in by.items() if len(v) >= 2})
    most = max(runs, default=0)
    if "paper" in named:
        return f"paper ({most} judge runs on {sampled} sessions; first greedy, rest T=0.7)"
    return f"repeats ({most} judge runs on every session; first greedy, rest T=0.7)"


def reliability_table(records: Sequence[SessionRecord]) -> Table:
    """ICC(2,1) and ICC(2,k) per dimension, alpha across dimensions, CV per judge."""
    cells = _judge_cells(records)
    judges = sorted({j for by in cells.values() for (_i, j) in by})
    rows = _icc_rows(cells, judges, len(records))
    per_session = [judge_means_from_events(r.events_of(JudgeEvent)) for r in records]
    ux_dims = experience_dimensions()
    items = [[s.get(d, math.nan) for d in ux_dims] for s in per_session if s]
    alpha = cronbach_alpha(np.array(items)) if items else math.nan
    rows.append([f"alpha across the {len(ux_dims)} UX dimensions", len(items), _r(alpha), None])
    rows.append([f"CV protocol: {_protocol(records, cells)}", None, None, None])
    for judge in judges:
        cvs = [
            coefficient_of_variation(v)
            for by in cells.values()
            for (_i, j), v in by.items()
            if j == judge and len(v) >= 2
        ]
        rows.append([f"CV over judge runs: {judge}", len(cvs), _r(_mean(cvs)), None])
    cols = ["statistic", "n", "value (ICC(2,1) / alpha / CV)", "ICC(2,k)"]
    return _table("PrefIx: judge reliability", cols, rows)


NOT_RECORDED = "(not recorded)"


def task_data_table(records: Sequence[SessionRecord]) -> Table:
    """Per setting (the settings a user holds), which task data its tasks came from, where
    their coarse instructions came from and which rubric the judges ran, with the
    sessions of each."""
    counts: Counter[tuple[str, str, str, str]] = Counter()
    for r in records:
        if isinstance(r.outcome, PrefixOutcome):
            key = (
                "+".join(r.outcome.settings),
                r.outcome.task_data or NOT_RECORDED,
                r.outcome.instruction_source or NOT_RECORDED,
                r.outcome.rubric or NOT_RECORDED,
            )
            counts[key] += 1
    rows: list[Row] = [[*key, n] for key, n in counts.items()]
    cols = ["setting", "task data", "instructions", "judge rubric", "sessions"]
    return _table("PrefIx: task data, instructions and judge rubric per setting", cols, rows)


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
