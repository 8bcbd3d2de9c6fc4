"""Report tables of what methods cost and how often they failed.

- Token cost: the memory text each eval instance gave the agent (counted as recorded in
  the ``context_tokens`` score), against the full history's tokens, per method; the same
  restricted to users with at least `LONG_HISTORY` history sessions.
- Memory failures: calls into a peer memory library (mem0, langmem) or PRefine's learning loop,
  how many failed, how many extracted nothing, and errors a memory raised (recorded by the
  runner as error events).
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Sequence
from typing import Any

from rapport.log import ErrorEvent, SessionRecord

from ._tokens import TOKEN_METHOD
from ._types import MPTEvalOutcome

LONG_HISTORY = 8
"""Users with at least this many history sessions make the long-history columns."""

Row = list[str | int | float | None]


def _mean(values: Sequence[float]) -> float:
    return sum(values) / len(values) if values else math.nan


def _num(value: float, digits: int = 1) -> str:
    return "-" if math.isnan(value) else f"{value:.{digits}f}"


def _pct(part: float, whole: float) -> str:
    return f"{100.0 * part / whole:.2f}%" if whole else "-"


def _evals(records: Sequence[SessionRecord]) -> list[SessionRecord]:
    return [r for r in records if isinstance(r.outcome, MPTEvalOutcome)]


def _outcome(record: SessionRecord) -> MPTEvalOutcome:
    assert isinstance(record.outcome, MPTEvalOutcome)  # only eval records get here
    return record.outcome


def _agent_prompt_tokens(record: SessionRecord) -> float:
    return float(sum(c.prompt_tokens for c in record.usage if c.role == "agent"))


def token_rows(records: Sequence[SessionRecord]) -> list[Row]:
    """Per method: context and full-history tokens (mean per instance) and their ratio.

    The ratio is total context tokens over total full-history tokens of the same instances;
    the ``>= 8`` columns keep only users with long histories (PRefine's 2% claim).
    """
    by_method: dict[str, list[SessionRecord]] = defaultdict(list)
    for r in _evals(records):
        by_method[r.condition].append(r)
    rows: list[Row] = []
    for method, group in sorted(by_method.items()):
        long = [r for r in group if _outcome(r).history_sessions >= LONG_HISTORY]
        rows.append([method, len(group), *_token_cells(group), len(long), *_long_cells(long)])
    return rows


def _token_cells(group: Sequence[SessionRecord]) -> list[str]:
    context = [r.scores.get("context_tokens", 0.0) for r in group]
    full = [float(_outcome(r).full_history_tokens) for r in group]
    prompt = [_agent_prompt_tokens(r) for r in group]
    return [
        _num(_mean(context)),
        _num(_mean(full)),
        _pct(sum(context), sum(full)),
        _num(_mean(prompt)),
    ]


def _long_cells(long: Sequence[SessionRecord]) -> list[str]:
    context = [r.scores.get("context_tokens", 0.0) for r in long]
    full = [float(_outcome(r).full_history_tokens) for r in long]
    ratios = [c / f for c, f in zip(context, full, strict=True) if f]
    return [
        _num(_mean(context)),
        _pct(sum(context), sum(full)),
        _pct(max(ratios), 1.0) if ratios else "-",
    ]


def token_table(records: Sequence[SessionRecord]) -> tuple[str, list[str], list[Row]]:
    """(title, columns, rows) of the token-cost table."""
    methods = sorted({_outcome(r).token_method for r in _evals(records)} - {""}) or [TOKEN_METHOD]
    title = f"MPT: inference context vs full history (tokens: {'; '.join(methods)})"
    columns = [
        "method",
        "n",
        "context tokens (mean)",
        "full-history tokens (mean)",
        "context / full",
        "agent prompt tokens (mean)",
        f"n (>={LONG_HISTORY} sessions)",
        f"context tokens (>={LONG_HISTORY})",
        f"context / full (>={LONG_HISTORY})",
        f"max per instance (>={LONG_HISTORY})",
    ]
    return title, columns, token_rows(records)


def failure_rows(records: Sequence[SessionRecord]) -> list[Row]:
    """Per method with failure counts or raised memory errors: users, calls, failures, rate,
    empty extractions, raised errors. Counts are cumulative per user, so each user's last
    recorded counts are summed."""
    final: dict[str, dict[str, dict[str, int]]] = defaultdict(dict)
    for r in _evals(records):
        if r.memory_health is None:
            continue
        counts = r.memory_health.model_dump()
        seen = final[r.condition].get(r.user_id)
        if seen is None or counts["calls"] >= seen["calls"]:
            final[r.condition][r.user_id] = counts
    raised: dict[str, int] = defaultdict(int)
    for r in records:
        raised[r.condition] += sum(e.where.startswith("memory") for e in r.events_of(ErrorEvent))
    rows: list[Row] = []
    for method in sorted(set(final) | {m for m, n in raised.items() if n}):
        users = final.get(method, {})
        total = {k: sum(c[k] for c in users.values()) for k in ("calls", "failures", "empty")}
        rate = _pct(total["failures"], total["calls"]) if users else "-"
        peer = [total["calls"], total["failures"], rate, total["empty"]] if users else ["-"] * 4
        rows.append([method, len(users) or "-", *peer, raised[method]])
    return rows


def failure_table(records: Sequence[SessionRecord]) -> tuple[str, list[str], list[Row]] | None:
    """(title, columns, rows) of the memory-failure table; None when nothing failed or
    no method counts its calls."""
    rows = failure_rows(records)
    if not rows:
        return None
    columns = [
        "method",
        "users",
        "calls",
        "failed calls",
        "failure rate",
        "empty extractions",
        "raised errors",
    ]
    title = "MPT: memory failures (counted library / learning calls; errors a memory raised)"
    return title, columns, rows


def cost_tables(records: Sequence[SessionRecord]) -> list[tuple[str, list[str], list[Row]]]:
    """The token-cost table, then the memory-failure table when there is one."""
    tables: list[Any] = [token_table(records)]
    failures = failure_table(records)
    if failures is not None:
        tables.append(failures)
    return tables
