"""The gym report: env x method rewards with % over the raw model, and library-building cost."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from statistics import fmean

from rapport._stats import bootstrap_interval
from rapport.log import Cell, RecallEvent, SessionRecord, Table

from ._types import GymOutcome

BASELINE = "none"


def _eval_groups(
    records: Iterable[SessionRecord],
) -> dict[tuple[str, str], list[tuple[SessionRecord, GymOutcome]]]:
    """Finished eval episodes (with their outcomes) by (env, method)."""
    groups: dict[tuple[str, str], list[tuple[SessionRecord, GymOutcome]]] = defaultdict(list)
    for r in records:
        if r.split == "eval" and r.status == "ok" and isinstance(r.outcome, GymOutcome):
            groups[(r.outcome.env, r.condition)].append((r, r.outcome))
    return groups


def reward_table(records: Iterable[SessionRecord]) -> Table:
    """Mean eval reward per env (rows) and method (columns) with a 95% bootstrap CI over
    the env's eval episodes, and the % change of the mean over ``none``."""
    cells = {
        key: [float(r.scores.get("reward", o.trajectory_reward)) for r, o in rs]
        for key, rs in _eval_groups(records).items()
    }
    envs = sorted({e for e, _ in cells})
    methods = sorted({m for _, m in cells}, key=lambda m: (m != BASELINE, m))
    rows: list[list[Cell]] = []
    for env in envs:
        base = fmean(cells[(env, BASELINE)]) if cells.get((env, BASELINE)) else None
        row: list[Cell] = [env]
        for m in methods:
            values = cells.get((env, m))
            if not values:
                row.append("-")
                continue
            low, high = bootstrap_interval(values)
            change = _change(fmean(values), base if m != BASELINE else None)
            row.append(f"{fmean(values):.3f} [{low:.3f}, {high:.3f}]{change}")
        rows.append(row)
    return Table(
        title="Gym reward by environment (eval episodes, mean [95% CI])",
        columns=["env", *methods],
        rows=rows,
    )


def _change(mean: float, base: float | None) -> str:
    if base is None:
        return ""
    if base == 0:
        return f" ({mean - base:+.3f} abs)"
    return f" ({100 * (mean - base) / base:+.0f}%)"


def paired_table(records: Iterable[SessionRecord]) -> Table:
    """Each method's eval reward minus ``none``'s on the same episodes (same stream and
    episode seed), per env: the mean difference with a 95% bootstrap CI, and how many
    episodes it won, tied and lost."""
    groups = _eval_groups(records)
    rows: list[list[Cell]] = []
    for env, method in sorted(groups, key=lambda k: (k[0], k[1])):
        if method == BASELINE or (env, BASELINE) not in groups:
            continue
        base = {
            (r.user_id, r.spec_id): float(r.scores.get("reward", 0.0))
            for r, _ in groups[(env, BASELINE)]
        }
        diffs = [
            float(r.scores.get("reward", 0.0)) - base[(r.user_id, r.spec_id)]
            for r, _ in groups[(env, method)]
            if (r.user_id, r.spec_id) in base
        ]
        if not diffs:
            continue
        low, high = bootstrap_interval(diffs)
        wins = sum(d > 1e-9 for d in diffs)
        losses = sum(d < -1e-9 for d in diffs)
        rows.append(
            [
                env,
                method,
                len(diffs),
                f"{fmean(diffs):+.3f} [{low:+.3f}, {high:+.3f}]",
                f"{wins}/{len(diffs) - wins - losses}/{losses}",
            ]
        )
    return Table(
        title=f"Eval reward minus {BASELINE}, paired by episode (mean [95% CI])",
        columns=["env", "method", "episodes", "difference", "won/tied/lost"],
        rows=rows,
    )


def cost_table(records: Iterable[SessionRecord]) -> Table:
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
    rows: list[list[Cell]] = [[m, calls[m], memory_calls[m], tokens[m]] for m in sorted(calls)]
    return Table(
        title="Cost of building memory (train episodes)",
        columns=["method", "model calls", "memory-role calls", "tokens"],
        rows=rows,
    )


def behaviour_table(records: Iterable[SessionRecord]) -> Table:
    """How eval episodes went per env and method: episodes, success rate, turns used,
    repeated moves sampled again, and retrieved memory per episode."""
    groups = _eval_groups(records)
    rows: list[list[Cell]] = []
    for env, method in sorted(groups, key=lambda k: (k[0], k[1] != BASELINE, k[1])):
        rs = groups[(env, method)]
        rows.append(
            [
                env,
                method,
                len(rs),
                f"{fmean(float(o.success) for _, o in rs):.0%}",
                f"{fmean(float(o.turns_used) for _, o in rs):.1f}",
                f"{fmean(float(o.resampled) for _, o in rs):.1f}",
                f"{fmean(float(len(r.events_of(RecallEvent))) for r, _ in rs):.1f}",
            ]
        )
    return Table(
        title="Eval episodes: how they went",
        columns=["env", "method", "episodes", "solved", "turns", "repeats re-asked", "recalls"],
        rows=rows,
    )


def tasks_table(records: Iterable[SessionRecord]) -> Table:
    """Where each env's episodes came from: UserRL's tasks (``--gym-data``: how many its
    split holds, how many were played) or rapport's own content."""
    seen: dict[tuple[str, str], tuple[set[str], int | None, int]] = {}
    for r in records:
        outcome = r.outcome
        if not isinstance(outcome, GymOutcome):
            continue
        played, pool, episodes = seen.get((outcome.env, r.split), (set(), None, 0))
        if outcome.task_id is not None:
            played.add(outcome.task_id)
            pool = outcome.pool
        seen[(outcome.env, r.split)] = (played, pool, episodes + 1)
    rows: list[list[Cell]] = []
    for (env, split), (played, pool, episodes) in sorted(seen.items()):
        source = "UserRL checkout" if played else "rapport's own"
        userrl_split = "train" if split == "train" else "test"
        loaded = f"{pool} ({userrl_split})" if pool is not None else "-"
        rows.append([env, split, source, loaded, len(played) if played else "-", episodes])
    return Table(
        title="Gym tasks: where the episodes came from",
        columns=["env", "split", "tasks from", "tasks loaded", "tasks played", "episodes"],
        rows=rows,
    )


def report_tables(records: Sequence[SessionRecord]) -> list[Table]:
    """The gym benchmark's tables: reward by env x method with CIs, the paired difference
    to ``none``, how eval episodes went, the library-building cost, and, when episodes
    played UserRL's tasks, where they came from."""
    tables = [
        reward_table(records),
        paired_table(records),
        behaviour_table(records),
        cost_table(records),
    ]
    if any(isinstance(r.outcome, GymOutcome) and r.outcome.task_id for r in records):
        tables.append(tasks_table(records))
    return tables
