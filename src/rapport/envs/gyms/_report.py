"""The gym report: env x method rewards with % over the raw model, and library-building cost."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from statistics import fmean
from typing import Any

from rapport.log import SessionRecord

BASELINE = "none"


def _table(title: str, columns: list[str], rows: list[list[Any]]) -> Any:
    try:
        from rapport.report import Table  # type: ignore[attr-defined]
    except ImportError:
        return {"title": title, "columns": columns, "rows": rows}
    return Table(title=title, columns=columns, rows=rows)


def _eval_groups(records: Iterable[SessionRecord]) -> dict[tuple[str, str], list[SessionRecord]]:
    """Finished eval sessions by (env, method)."""
    groups: dict[tuple[str, str], list[SessionRecord]] = defaultdict(list)
    for r in records:
        if r.split == "eval" and r.status == "ok":
            groups[(str(r.outcome.get("env", "?")), r.condition)].append(r)
    return groups


def reward_table(records: Iterable[SessionRecord]) -> Any:
    """Mean eval reward per env (rows) and method (columns), with % change over ``none``."""
    cells = {
        key: [float(r.scores.get("reward", r.outcome.get("trajectory_reward", 0.0))) for r in rs]
        for key, rs in _eval_groups(records).items()
    }
    envs = sorted({e for e, _ in cells})
    methods = sorted({m for _, m in cells}, key=lambda m: (m != BASELINE, m))
    rows = []
    for env in envs:
        base = fmean(cells[(env, BASELINE)]) if cells.get((env, BASELINE)) else None
        row: list[Any] = [env]
        for m in methods:
            values = cells.get((env, m))
            mean = fmean(values) if values else None
            row.append(_cell(mean, base if m != BASELINE else None))
        rows.append(row)
    return _table("Gym reward by environment (eval episodes)", ["env", *methods], rows)


def _cell(mean: float | None, base: float | None) -> str:
    if mean is None:
        return "-"
    if base is None:
        return f"{mean:.3f}"
    if base == 0:
        return f"{mean:.3f} ({mean - base:+.3f} abs)"
    return f"{mean:.3f} ({100 * (mean - base) / base:+.0f}%)"


def cost_table(records: Iterable[SessionRecord]) -> Any:
    """Model calls and tokens spent in train sessions per method (building the memory)."""
    calls: dict[str, int] = defaultdict(int)
    tokens: dict[str, int] = defaultdict(int)
    memory_calls: dict[str, int] = defaultdict(int)
    for r in records:
        if r.split != "train":
            continue
        for c in r.usage:
            calls[r.condition] += 1
            tokens[r.condition] += c.prompt_tokens + c.completion_tokens
            memory_calls[r.condition] += c.role == "memory"
    rows = [[m, calls[m], memory_calls[m], tokens[m]] for m in sorted(calls)]
    return _table(
        "Cost of building memory (train episodes)",
        ["method", "model calls", "memory-role calls", "tokens"],
        rows,
    )


def behaviour_table(records: Iterable[SessionRecord]) -> Any:
    """How eval episodes went per env and method: episodes, success rate, turns used,
    repeated moves sampled again, and retrieved memory per episode."""
    groups = _eval_groups(records)
    rows = []
    for env, method in sorted(groups, key=lambda k: (k[0], k[1] != BASELINE, k[1])):
        rs = groups[(env, method)]
        rows.append(
            [
                env,
                method,
                len(rs),
                f"{fmean(float(bool(r.outcome.get('success'))) for r in rs):.0%}",
                f"{fmean(float(r.outcome.get('turns_used', 0)) for r in rs):.1f}",
                f"{fmean(float(r.outcome.get('resampled', 0)) for r in rs):.1f}",
                f"{fmean(float(len(r.events_of('recall'))) for r in rs):.1f}",
            ]
        )
    return _table(
        "Eval episodes: how they went",
        ["env", "method", "episodes", "solved", "turns", "repeats re-asked", "recalls"],
        rows,
    )


def report_tables(records: list[SessionRecord]) -> list[Any]:
    """The gym benchmark's tables: reward by env x method, how eval episodes went, and the
    library-building cost."""
    return [reward_table(records), behaviour_table(records), cost_table(records)]
