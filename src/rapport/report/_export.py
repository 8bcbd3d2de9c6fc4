"""A run's sessions as a table for pandas: one row per session or per turn, with events.

JSON lines keep turns, events and outcomes as nested objects; Parquet holds them as JSON
text (lists of ids stay lists), so both load with ``pandas.read_json(lines=True)`` /
``pandas.read_parquet``.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Literal

from rapport.log import SessionRecord
from rapport.store import RoleUsage, RunStore

Format = Literal["jsonl", "parquet"]
Grain = Literal["session", "turn"]
_NESTED = ("turns", "events", "outcome", "tool_calls")


def session_row(record: SessionRecord, usage: dict[str, RoleUsage]) -> dict[str, Any]:
    """One session, flat: keys, scores (``score_*``), tokens per role, event counts."""
    row: dict[str, Any] = {
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
    for role, u in sorted(usage.items()):
        row[f"calls_{role}"] = u.calls
        row[f"prompt_tokens_{role}"] = u.prompt_tokens
        row[f"completion_tokens_{role}"] = u.completion_tokens
    counts = Counter(e.kind for e in record.events)
    row.update({f"n_{kind}": n for kind, n in sorted(counts.items())})
    row["enforced"] = [e.preference_id for e in record.events_of("enforcement")]
    row["errors"] = [f"{e.where}: {e.message}" for e in record.events_of("error")]
    row["turns"] = [t.model_dump(mode="json") for t in record.turns]
    row["events"] = [e.model_dump(mode="json") for e in record.events]
    row["outcome"] = record.outcome.model_dump(mode="json")
    return row


def turn_rows(record: SessionRecord) -> Iterator[dict[str, Any]]:
    """One row per turn with the events at that turn (session-wide events are left out)."""
    for turn in record.turns:
        events = [e for e in record.events if e.turn == turn.index]
        yield {
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
            "recall": "\n".join(e.text for e in events if e.kind == "recall"),
            "enforced": [e.preference_id for e in events if e.kind == "enforcement"],
            "errors": [f"{e.where}: {e.message}" for e in events if e.kind == "error"],
            "events": [e.model_dump(mode="json") for e in events],
        }


def export_rows(store: RunStore, grain: Grain) -> Iterator[dict[str, Any]]:
    """The rows of a run at a grain, in condition, user, session (and turn) order."""
    usage = store.usage_by_session() if grain == "session" else {}
    for record in store.iter_sessions():
        if grain == "session":
            yield session_row(
                record, usage.get((record.condition, record.user_id, record.index), {})
            )
        else:
            yield from turn_rows(record)


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
        raise ImportError("Parquet export needs pyarrow: pip install 'rapport[export]'") from exc
    flat = [
        {k: json.dumps(v, ensure_ascii=False) if k in _NESTED else v for k, v in row.items()}
        for row in rows
    ]
    columns = list(dict.fromkeys(k for row in flat for k in row))
    table = pa.table({c: [row.get(c) for row in flat] for c in columns})
    pq.write_table(table, out)
    return len(flat)
