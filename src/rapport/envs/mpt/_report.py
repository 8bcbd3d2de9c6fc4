"""Report tables of MPT runs: challenge x regime x method, difficulty x method, and a
per-method summary."""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Callable, Sequence
from typing import Any

from rapport.log import Cell, SessionRecord, Table

from ._costs import cost_tables
from ._generate import CHALLENGES, QUERY_TYPES
from ._metrics import DECLARED, METRICS, POOLED, summarize
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


REGIME_METRICS = [m for m in METRICS if m.regime]
"""The metrics of one query type (regime) each, in the paper's column order."""
TOKENS = DECLARED["token_ratio"]


def report_tables(records: Sequence[SessionRecord]) -> list[Table]:
    """The challenge x regime (query type) x method table, the difficulty x method table
    (query types pooled), a per-method summary and the cost tables. Each metric shows only
    in rows of the regime it is declared on, and every column names what it is over."""
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
        shown = [
            _fmt(s[m.name], s[f"{m.name}_ci"]) if m.regime == qtype else "-" for m in REGIME_METRICS
        ]
        rows.append([method, label(challenge), qtype, s["n"], *shown, _fmt(s[TOKENS.name])])
    main = _make_table(
        f"MPT: challenge x regime x method ({_ci_and_dates(evals)})",
        ["method", "challenge", "regime", "n", *(m.column() for m in (*REGIME_METRICS, TOKENS))],
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
        rows.append([label(challenge), method, s["n"], *_pooled_cells(s)])
    return _make_table(
        "MPT: difficulty x method, query types pooled (95% bootstrap CI)",
        ["challenge", "method", "n", *_POOLED_COLUMNS],
        rows,
    )


_POOLED_COLUMNS = [DECLARED[n].column(POOLED) for n in ("p_em", "oa_f1")] + [TOKENS.column()]
"""P-EM and OA-F1 over the instances of both query types, and the token ratio."""


def _pooled_cells(s: dict[str, Any]) -> list[Cell]:
    return [_fmt(s["p_em"], s["p_em_ci"]), _fmt(s["oa_f1"], s["oa_f1_ci"]), _fmt(s["token_ratio"])]


def _challenge_labels(
    evals: Sequence[tuple[SessionRecord, MPTEvalOutcome]],
) -> Callable[[str], str]:
    """Challenge -> ``"recall (easy)"``: the challenge with its difficulty when one is known."""
    levels = {o.challenge: o.difficulty for _, o in evals if o.difficulty}
    return lambda c: f"{c} ({levels[c]})" if c in levels else c


def _ci_and_dates(evals: Sequence[tuple[SessionRecord, MPTEvalOutcome]]) -> str:
    """The CI and the date rule that scored the instances (the ``dates`` and ``month_dates``
    options), as the outcomes record it (or, stored before they did, the scores)."""
    rules = {o.date_rule or _stored_rule(r.scores) for r, o in evals}
    if len(rules) > 1:
        return "95% bootstrap CI; dates: mixed rules (the date options changed during the run)"
    return "95% bootstrap CI; dates: " + {
        "dateparser": "dateparser, as the paper-era scorer",
        "month_names": "month names read too (month_dates)",
    }.get(next(iter(rules), "exp7"), "as PRefine's scorer")


def _stored_rule(scores: dict[str, float]) -> str:
    """The date rule of a run that stored it among the scores."""
    if scores.get("dateparser", 0.0) == 1.0:
        return "dateparser"
    return "month_names" if scores.get("month_names", 0.0) == 1.0 else "exp7"


def _summary(records: Sequence[SessionRecord], evals: list[SessionRecord]) -> Table:
    by_method: dict[str, list[SessionRecord]] = defaultdict(list)
    for r in evals:
        by_method[r.condition].append(r)
    rows: list[list[Cell]] = []
    for method, group in sorted(by_method.items()):
        s = summarize([r.scores for r in group])
        errors = sum(1 for r in records if r.condition == method and r.status == "error")
        rows.append([method, s["n"], *_pooled_cells(s), _fmt(s["valid"]), errors])
    return _make_table(
        "MPT: per method",
        ["method", "n", *_POOLED_COLUMNS, "schema-valid", "errors"],
        rows,
    )
