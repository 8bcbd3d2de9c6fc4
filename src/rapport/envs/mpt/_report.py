"""Report tables of MPT runs: challenge x regime x method, difficulty x method, and a
per-method summary."""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Callable, Sequence

from rapport.log import Cell, SessionRecord, Table

from ._costs import cost_tables
from ._generate import CHALLENGES, QUERY_TYPES
from ._metrics import summarize
from ._types import MPTEvalOutcome


def _fmt(value: float, ci: tuple[float, float] | None = None) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "-"
    text = f"{value:.3f}"
    if ci is not None and not any(math.isnan(c) for c in ci):
        text += f" [{ci[0]:.2f}, {ci[1]:.2f}]"
    return text


def _make_table(title: str, columns: list[str], rows: list[list[Cell]]) -> Table:
    return Table(title=title, columns=columns, rows=rows)


def _eval_rows(records: Sequence[SessionRecord]) -> list[tuple[SessionRecord, MPTEvalOutcome]]:
    return [(r, r.outcome) for r in records if isinstance(r.outcome, MPTEvalOutcome) and r.scores]


GUIDED = ("p_em", "ea_f1", "oa_f1")
"""The context-guided regime's metrics, as the paper reports them."""
FREE = ("precision", "recall", "f1")
"""The context-free regime's metrics (P / R / F1)."""
HEADERS = ("P-EM", "EA-F1", "OA-F1", "P", "R", "F1")


def report_tables(records: Sequence[SessionRecord]) -> list[Table]:
    """The challenge x regime (query type) x method table, the difficulty x method table
    (query types pooled), a per-method summary and the cost tables."""
    evals = _eval_rows(records)
    cells: dict[tuple[str, str, str], list[dict[str, float]]] = defaultdict(list)
    for r, o in evals:
        cells[(r.condition, o.challenge, o.query_type)].append(r.scores)
    label = _challenge_labels(evals)
    order = {c: i for i, c in enumerate((*CHALLENGES, *QUERY_TYPES))}
    rows: list[list[Cell]] = []
    for (method, challenge, qtype), scores in sorted(
        cells.items(), key=lambda kv: (kv[0][0], order.get(kv[0][1], 99), order.get(kv[0][2], 99))
    ):
        s = summarize(scores)
        free = qtype == "context-free"
        cells_of = [_fmt(s[m], s[f"{m}_ci"]) for m in (*GUIDED, *FREE)]
        shown = ["-"] * len(GUIDED) + cells_of[len(GUIDED) :] if free else cells_of[: len(GUIDED)]
        shown += [] if free else ["-"] * len(FREE)
        rows.append([method, label(challenge), qtype, s["n"], *shown, _fmt(s["token_ratio"])])
    main = _make_table(
        f"MPT: challenge x regime x method (95% bootstrap CI; {_date_rule(evals)})",
        ["method", "challenge", "regime", "n", *HEADERS, "tokens / full history"],
        rows,
    )
    extra = [_make_table(title, columns, rows) for title, columns, rows in cost_tables(records)]
    return [main, _by_difficulty(evals), _summary(records, [r for r, _ in evals]), *extra]


def _by_difficulty(evals: Sequence[tuple[SessionRecord, MPTEvalOutcome]]) -> Table:
    """P-EM and OA-F1 per challenge (difficulty) and method, over all query types."""
    cells: dict[tuple[str, str], list[dict[str, float]]] = defaultdict(list)
    for r, o in evals:
        cells[(o.challenge, r.condition)].append(r.scores)
    label = _challenge_labels(evals)
    order = {c: i for i, c in enumerate(CHALLENGES)}
    rows: list[list[Cell]] = []
    for (challenge, method), scores in sorted(
        cells.items(), key=lambda kv: (order.get(kv[0][0], 99), kv[0][0], kv[0][1])
    ):
        s = summarize(scores)
        rows.append(
            [
                label(challenge),
                method,
                s["n"],
                _fmt(s["p_em"], s["p_em_ci"]),
                _fmt(s["oa_f1"], s["oa_f1_ci"]),
                _fmt(s["token_ratio"]),
            ]
        )
    return _make_table(
        "MPT: difficulty x method, query types pooled (95% bootstrap CI)",
        ["challenge", "method", "n", "P-EM", "OA-F1", "tokens / full history"],
        rows,
    )


def _challenge_labels(
    evals: Sequence[tuple[SessionRecord, MPTEvalOutcome]],
) -> Callable[[str], str]:
    """Challenge -> ``"recall (easy)"``: the challenge with its difficulty when one is known."""
    levels = {o.challenge: o.difficulty for _, o in evals if o.difficulty}
    return lambda c: f"{c} ({levels[c]})" if c in levels else c


def _date_rule(evals: Sequence[tuple[SessionRecord, MPTEvalOutcome]]) -> str:
    """Which date rule scored the instances (the ``dates`` and ``month_dates`` options)."""
    rules = {
        "dateparser"
        if r.scores.get("dateparser", 0.0) == 1.0
        else "month_names"
        if r.scores.get("month_names", 0.0) == 1.0
        else "exp7"
        for r, _ in evals
    }
    if len(rules) > 1:
        return "dates: mixed rules (the date options changed during the run)"
    if rules == {"dateparser"}:
        return "dates: dateparser, as the paper-era scorer"
    if rules == {"month_names"}:
        return "dates: month names read too (month_dates)"
    return "dates: as PRefine's scorer"


def _summary(records: Sequence[SessionRecord], evals: list[SessionRecord]) -> Table:
    by_method: dict[str, list[SessionRecord]] = defaultdict(list)
    for r in evals:
        by_method[r.condition].append(r)
    rows: list[list[Cell]] = []
    for method, group in sorted(by_method.items()):
        s = summarize([r.scores for r in group])
        errors = sum(1 for r in records if r.condition == method and r.status == "error")
        rows.append(
            [
                method,
                s["n"],
                _fmt(s["p_em"], s["p_em_ci"]),
                _fmt(s["oa_f1"], s["oa_f1_ci"]),
                _fmt(s["token_ratio"]),
                _fmt(s["valid"]),
                errors,
            ]
        )
    return _make_table(
        "MPT: per method",
        ["method", "n", "P-EM", "OA-F1", "mean token ratio", "schema-valid", "errors"],
        rows,
    )
