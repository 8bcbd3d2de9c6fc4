"""A run's sessions as a table for pandas: one row per session or per turn, with events.

Every row starts with its run's columns (``run_id``, ``benchmark``, ``seed``, ``model_ROLE``
per role), so exports of several runs concatenate into one table. Counts (``n_KIND`` per event
kind, ``calls_ROLE`` and tokens per role) are 0 where a session has none.

JSON lines keep turns, events and outcomes as nested objects; Parquet holds them as JSON
text (lists of ids stay lists), so both load with ``pandas.read_json(lines=True)`` /
``pandas.read_parquet``; `load` reads a run dir straight into DataFrames.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, NamedTuple

from rapport.log import ErrorEvent, RecallEvent, SessionRecord
from rapport.memory import Pushback, pushbacks
from rapport.store import RoleUsage, RunStore

if TYPE_CHECKING:
    import pandas

Format = Literal["jsonl", "parquet"]
Grain = Literal["session", "turn"]
_NESTED = ("turns", "events", "outcome", "tool_calls")
_NO_CALLS = RoleUsage(calls=0, cached_calls=0, prompt_tokens=0, completion_tokens=0, errors=0)


def run_columns(store: RunStore) -> dict[str, Any]:
    """The columns every row of a run carries: its id, benchmark, seed and the model each
    role called (``model_agent`` ...; a role that called several: joined by ``+``)."""
    run = store.run()
    models = {role: "+".join(specs) for role, specs in store.models_by_role().items()}
    for role, spec in run.config.models.items():
        if role != "all" or not models:  # `all` stands for the roles that called
            models.setdefault(role, spec)
    columns: dict[str, Any] = {
        "run_id": run.id,
        "benchmark": run.benchmark,
        "seed": run.config.seed,
    }
    columns.update({f"model_{role}": spec for role, spec in sorted(models.items())})
    return columns


def session_row(
    record: SessionRecord,
    usage: dict[str, RoleUsage],
    *,
    run: dict[str, Any] | None = None,
    roles: Sequence[str] = (),
    kinds: Sequence[str] = (),
) -> dict[str, Any]:
    """One session, flat: the run's columns, keys, scores (``score_*``), calls and tokens per
    role, event counts (``roles`` and ``kinds`` get 0 where the session has none)."""
    row: dict[str, Any] = {
        **(run or {}),
        "condition": record.condition,
        "user_id": record.user_id,
        "session": record.index + 1,  # counted from 1, as the viewer and the report show it
        "spec_id": record.spec_id,
        "split": record.split,
        "status": record.status,
        "memory_version": record.memory_version,
        "started_at": record.started_at,
        "finished_at": record.finished_at,
        "n_turns": len(record.turns),
    }
    row.update({f"score_{k}": v for k, v in record.scores.items()})
    for role in sorted({*roles, *usage}):
        u = usage.get(role, _NO_CALLS)
        row[f"calls_{role}"] = u.calls
        row[f"prompt_tokens_{role}"] = u.prompt_tokens
        row[f"completion_tokens_{role}"] = u.completion_tokens
    counts: Counter[str] = Counter(str(e.kind) for e in record.events)
    row.update({f"n_{kind}": counts.get(kind, 0) for kind in sorted({*kinds, *counts})})
    row["enforced"] = [e.pushback_preference() for e in pushbacks(record)]
    row["errors"] = [f"{e.where}: {e.message}" for e in record.events_of(ErrorEvent)]
    row["turns"] = [t.model_dump(mode="json") for t in record.turns]
    row["events"] = [e.model_dump(mode="json") for e in record.events]
    row["outcome"] = record.outcome.model_dump(mode="json")
    return row


def turn_rows(record: SessionRecord, run: dict[str, Any] | None = None) -> Iterator[dict[str, Any]]:
    """One row per turn (after the run's columns) with the events at that turn
    (session-wide events are left out)."""
    for turn in record.turns:
        events = [e for e in record.events if e.turn == turn.index]
        yield {
            **(run or {}),
            "condition": record.condition,
            "user_id": record.user_id,
            "session": record.index + 1,
            "spec_id": record.spec_id,
            "split": record.split,
            "status": record.status,
            "turn": turn.index,
            "speaker": turn.speaker,
            "text": turn.text,
            "tool_calls": [c.model_dump(mode="json") for c in turn.tool_calls],
            "recall": "\n".join(e.text for e in events if isinstance(e, RecallEvent)),
            "enforced": [e.pushback_preference() for e in events if isinstance(e, Pushback)],
            "errors": [f"{e.where}: {e.message}" for e in events if isinstance(e, ErrorEvent)],
            "events": [e.model_dump(mode="json") for e in events],
        }


def export_rows(store: RunStore, grain: Grain) -> Iterator[dict[str, Any]]:
    """The rows of a run at a grain, in condition, user, session (and turn) order."""
    run = run_columns(store)
    if grain == "turn":
        for record in store.iter_sessions():
            yield from turn_rows(record, run)
        return
    usage = store.usage_by_session()
    roles, kinds = sorted(store.usage_by_role()), store.event_kinds()
    for record in store.iter_sessions():
        key = (record.condition, record.user_id, record.index)
        yield session_row(record, usage.get(key, {}), run=run, roles=roles, kinds=kinds)


def export_sessions(
    run_dir: str | Path, out: str | Path, *, fmt: Format = "jsonl", grain: Grain = "session"
) -> int:
    """Write a run's sessions (or turns) to `out`; returns the number of rows.

    Raises:
        FileNotFoundError: the dir holds no run.
        ImportError: Parquet without pyarrow.
        rapport.store.StoreError: a damaged store (`out` is then left as it was).
    """
    out = Path(out)
    # Written beside the target and moved over it once whole: a run that fails half way
    # (a damaged session, a full disk) leaves an existing file as it was.
    partial = out.with_name(f".{out.name}.partial")
    try:
        with RunStore.open_readonly(run_dir) as store:
            rows = export_rows(store, grain)
            count = _write_jsonl(rows, partial) if fmt == "jsonl" else _write_parquet(rows, partial)
        partial.replace(out)
    finally:
        partial.unlink(missing_ok=True)
    return count


def _write_jsonl(rows: Iterator[dict[str, Any]], out: Path) -> int:
    n = 0
    with out.open("w", encoding="utf-8") as handle:
        for row in rows:
            handle.write(json.dumps(row, ensure_ascii=False) + "\n")
            n += 1
    return n


def _write_parquet(rows: Iterator[dict[str, Any]], out: Path) -> int:
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError as exc:
        raise ImportError(
            "Parquet export needs pyarrow: pip install 'rapport-toolkit[export]'"
        ) from exc
    flat = [
        {k: json.dumps(v, ensure_ascii=False) if k in _NESTED else v for k, v in row.items()}
        for row in rows
    ]
    columns = list(dict.fromkeys(k for row in flat for k in row))
    table = pa.table({c: [row.get(c) for row in flat] for c in columns})
    pq.write_table(table, out)
    return len(flat)


class RunTables(NamedTuple):
    """A run's sessions and turns as DataFrames (see `load`)."""

    sessions: pandas.DataFrame
    turns: pandas.DataFrame


def load(run_dir: str | Path) -> RunTables:
    """A run's sessions and turns as pandas DataFrames: the rows ``rapport export`` writes
    (``--per session`` and ``--per turn``), with turns, events and outcomes as Python objects.

    Tables of several runs concatenate (``pandas.concat``): every row carries its run's id,
    benchmark, seed and models.

    Raises:
        FileNotFoundError: the dir holds no run.
        ImportError: pandas is not installed.
        rapport.store.StoreError: a damaged store.
    """
    try:
        import pandas as pd
    except ImportError as exc:
        raise ImportError(
            "rapport.load needs pandas: pip install 'rapport-toolkit[export]'"
        ) from exc
    with RunStore.open_readonly(run_dir) as store:
        if store.run_or_none() is None:
            raise FileNotFoundError(f"no run found in {run_dir} (its store holds no run header)")
        sessions = pd.DataFrame(list(export_rows(store, "session")))
        turns = pd.DataFrame(list(export_rows(store, "turn")))
    return RunTables(sessions=sessions, turns=turns)
