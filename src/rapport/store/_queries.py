"""The SQLite reads behind the viewer, the report and exports: pages of sessions, one session,
the scores alone, one user's memory. Read-only; every statement of the backend that only
reads for a page lives here."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from rapport._errors import error_line
from rapport.log import MemoryVersion, SessionRecord, UserRecord

Record = TypeVar("Record", bound=BaseModel)


class StoreError(ValueError):
    """A store file that cannot be used: a directory, not SQLite, damaged, or not rapport's.

    Raised before anything is written to it.
    """


def read_body(model: type[Record], body: str | bytes, path: Path) -> Record:
    """A stored JSON body as its record type.

    Raises:
        StoreError: the body does not read as a ``model`` (a damaged or foreign store).
    """
    try:
        return model.model_validate_json(body)
    except ValidationError as exc:
        raise StoreError(
            f"{path} is damaged: a stored {model.__name__} does not read ({error_line(exc)})"
        ) from exc


@dataclass(frozen=True)
class RoleUsage:
    """Totals of the model calls of one role (from the store)."""

    calls: int
    cached_calls: int
    prompt_tokens: int
    completion_tokens: int
    errors: int


@dataclass(frozen=True)
class SessionRow:
    """A session as a list shows it: its keys, status, scores and a few counts."""

    condition: str
    user_id: str
    index: int
    spec_id: str
    split: str
    status: str
    scores: dict[str, float]
    turns: int
    errors: int
    memory_version: int


@dataclass(frozen=True)
class ErrorRow:
    """One error event, located."""

    condition: str
    user_id: str
    index: int
    turn: int | None
    where: str
    message: str


_ERRORS_FROM = (
    "FROM sessions, json_each(sessions.body, '$.events') AS e "
    "WHERE json_extract(e.value, '$.kind') = 'error'"
)
_ROW_COLUMNS = (
    "condition, user_id, idx, spec_id, split, status, "
    "json_extract(body, '$.scores') AS scores, "
    "json_array_length(body, '$.turns') AS turns, "
    "json_extract(body, '$.memory_version') AS memory_version, "
    "(SELECT COUNT(*) FROM json_each(body, '$.events') "
    "WHERE json_extract(value, '$.kind') = 'error') AS errors"
)
_USAGE_COLUMNS = (
    "role, COUNT(*) AS calls, SUM(cached) AS cached_calls, "
    "SUM(prompt_tokens) AS prompt_tokens, SUM(completion_tokens) AS completion_tokens, "
    "SUM(error IS NOT NULL) AS errors"
)


def where(**values: Any) -> tuple[str, list[Any]]:
    """`` WHERE a = ? AND b = ?`` for the values that are not None, and their parameters."""
    columns = [k for k, v in values.items() if v is not None]
    if not columns:
        return "", []
    return " WHERE " + " AND ".join(f"{c} = ?" for c in columns), [values[c] for c in columns]


def _row(row: sqlite3.Row) -> SessionRow:
    return SessionRow(
        condition=row["condition"],
        user_id=row["user_id"],
        index=int(row["idx"]),
        spec_id=row["spec_id"],
        split=row["split"],
        status=row["status"],
        scores=json.loads(row["scores"] or "{}"),
        turns=int(row["turns"] or 0),
        errors=int(row["errors"] or 0),
        memory_version=int(row["memory_version"] or 0),
    )


def usage_rows(rows: list[sqlite3.Row]) -> dict[str, RoleUsage]:
    """Role -> usage from rows selected with the usage columns."""
    return {
        r["role"]: RoleUsage(**{f.name: int(r[f.name] or 0) for f in fields(RoleUsage)})
        for r in rows
    }


class ViewQueries:
    """Reads for pages: each touches only the rows the page shows."""

    _conn: sqlite3.Connection
    path: Path

    def has_table(self, name: str) -> bool:
        """Whether the database has a table (older or foreign files may lack some)."""
        row = self._conn.execute(
            "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (name,)
        ).fetchone()
        return row is not None

    def has_column(self, table: str, column: str) -> bool:
        """Whether a table has a column (stores written before it was added lack it)."""
        rows = self._conn.execute(f"PRAGMA table_info({table})").fetchall()
        return any(r["name"] == column for r in rows)

    def attempts(
        self, condition: str | None = None, user_id: str | None = None, *, errors: bool = False
    ) -> dict[tuple[str, str, int], int]:
        """(condition, user, index) -> how many times the session was played and stored
        (1 for every session of a store older than the count); ``errors``: only sessions
        with status ``error``."""
        filters, params = where(condition=condition, user_id=user_id)
        if errors:
            filters += (" AND " if filters else " WHERE ") + "status = 'error'"
        count = "attempts" if self.has_column("sessions", "attempts") else "1"
        rows = self._conn.execute(
            f"SELECT condition, user_id, idx, {count} AS n FROM sessions{filters}", params
        ).fetchall()
        return {(r["condition"], r["user_id"], int(r["idx"])): int(r["n"]) for r in rows}

    def data_version(self) -> int:
        """A number that changes when another connection commits (a run in progress)."""
        return int(self._conn.execute("PRAGMA data_version").fetchone()[0])

    def conditions(self) -> list[str]:
        """The conditions that have stored sessions (alphabetical)."""
        rows = self._conn.execute("SELECT DISTINCT condition FROM sessions").fetchall()
        return sorted(r["condition"] for r in rows)

    def session_rows(
        self,
        *,
        condition: str | None = None,
        user_id: str | None = None,
        index: int | None = None,
        status: str | None = None,
        offset: int = 0,
        limit: int = 50,
    ) -> list[SessionRow]:
        """One page of sessions, ordered by condition, user and index."""
        clause, params = where(condition=condition, user_id=user_id, idx=index, status=status)
        rows = self._conn.execute(
            f"SELECT {_ROW_COLUMNS} FROM sessions{clause} "
            "ORDER BY condition, user_id, idx LIMIT ? OFFSET ?",
            [*params, limit, offset],
        ).fetchall()
        return [_row(r) for r in rows]

    def count_rows(
        self,
        *,
        condition: str | None = None,
        user_id: str | None = None,
        index: int | None = None,
        status: str | None = None,
    ) -> int:
        """How many sessions `session_rows` pages through with these filters."""
        clause, params = where(condition=condition, user_id=user_id, idx=index, status=status)
        row = self._conn.execute(f"SELECT COUNT(*) AS n FROM sessions{clause}", params).fetchone()
        return int(row["n"])

    def session(self, condition: str, user_id: str, index: int) -> SessionRecord | None:
        """One stored session, whole."""
        row = self._conn.execute(
            "SELECT body FROM sessions WHERE condition = ? AND user_id = ? AND idx = ?",
            (condition, user_id, index),
        ).fetchone()
        return read_body(SessionRecord, row["body"], self.path) if row else None

    def sessions_of_spec(self, user_id: str, spec_id: str) -> list[SessionRecord]:
        """The sessions of one user on one problem, under every condition."""
        rows = self._conn.execute(
            "SELECT body FROM sessions WHERE user_id = ? AND spec_id = ? ORDER BY condition",
            (user_id, spec_id),
        ).fetchall()
        return [read_body(SessionRecord, r["body"], self.path) for r in rows]

    def score_records(self) -> list[SessionRecord]:
        """Every session with its keys, split, status and scores only (turns and events left
        out): what aggregates need, at a fraction of the cost of whole records."""
        rows = self._conn.execute(
            "SELECT condition, user_id, idx, spec_id, split, status, "
            "json_extract(body, '$.scores') AS scores FROM sessions "
            "ORDER BY condition, user_id, idx"
        ).fetchall()
        return [
            SessionRecord.model_construct(
                condition=r["condition"],
                user_id=r["user_id"],
                index=int(r["idx"]),
                spec_id=r["spec_id"],
                split=r["split"],
                status=r["status"],
                scores=json.loads(r["scores"] or "{}"),
            )
            for r in rows
        ]

    def session_usage(self, condition: str, user_id: str, index: int) -> dict[str, RoleUsage]:
        """Call counts and tokens per role of one session."""
        rows = self._conn.execute(
            f"SELECT {_USAGE_COLUMNS} FROM model_calls "
            "WHERE condition = ? AND user_id = ? AND idx = ? GROUP BY role ORDER BY role",
            (condition, user_id, index),
        ).fetchall()
        return usage_rows(rows)

    def user(self, user_id: str) -> UserRecord | None:
        """One user of the run."""
        row = self._conn.execute("SELECT body FROM users WHERE user_id = ?", (user_id,)).fetchone()
        return read_body(UserRecord, row["body"], self.path) if row else None

    def user_ids(self, *, offset: int = 0, limit: int = 50) -> list[str]:
        """One page of the run's user ids, in the run's order."""
        rows = self._conn.execute(
            "SELECT user_id FROM users ORDER BY position LIMIT ? OFFSET ?", (limit, offset)
        ).fetchall()
        return [r["user_id"] for r in rows]

    def user_count(self) -> int:
        """How many users the run has."""
        return int(self._conn.execute("SELECT COUNT(*) AS n FROM users").fetchone()["n"])

    def memory_version(self, condition: str, user_id: str, version: int) -> MemoryVersion | None:
        """One memory version of a user under a condition."""
        row = self._conn.execute(
            "SELECT body FROM memory_versions WHERE condition = ? AND user_id = ? AND version = ?",
            (condition, user_id, version),
        ).fetchone()
        return read_body(MemoryVersion, row["body"], self.path) if row else None

    def models_by_role(self) -> dict[str, dict[str, int]]:
        """Role -> model spec -> calls, over all stored sessions."""
        rows = self._conn.execute(
            "SELECT role, model, COUNT(*) AS calls FROM model_calls GROUP BY role, model "
            "ORDER BY role, model"
        ).fetchall()
        result: dict[str, dict[str, int]] = {}
        for r in rows:
            result.setdefault(r["role"], {})[r["model"]] = int(r["calls"])
        return result

    def event_kinds(self) -> list[str]:
        """The kinds of event any stored session holds, sorted.

        Raises:
            StoreError: a stored session is not JSON (a damaged store).
        """
        try:
            rows = self._conn.execute(
                "SELECT DISTINCT json_extract(e.value, '$.kind') AS kind "
                "FROM sessions, json_each(sessions.body, '$.events') AS e ORDER BY kind"
            ).fetchall()
        except sqlite3.OperationalError as exc:
            raise StoreError(f"{self.path} is damaged: a stored session is not JSON") from exc
        return [str(r["kind"]) for r in rows if r["kind"] is not None]

    def error_counts(self) -> dict[str, int]:
        """Condition -> error events over its sessions (conditions without errors left out)."""
        rows = self._conn.execute(
            f"SELECT condition, COUNT(*) AS n {_ERRORS_FROM} GROUP BY condition"
        ).fetchall()
        return {r["condition"]: int(r["n"]) for r in rows}

    def error_rows(self, *, offset: int = 0, limit: int = 50) -> list[ErrorRow]:
        """One page of error events, ordered by condition, user, session and turn."""
        rows = self._conn.execute(
            "SELECT condition, user_id, idx, json_extract(e.value, '$.turn') AS turn, "
            "json_extract(e.value, '$.where') AS place, "
            f"json_extract(e.value, '$.message') AS message {_ERRORS_FROM} "
            "ORDER BY condition, user_id, idx, e.id LIMIT ? OFFSET ?",
            (limit, offset),
        ).fetchall()
        return [
            ErrorRow(
                condition=r["condition"],
                user_id=r["user_id"],
                index=int(r["idx"]),
                turn=None if r["turn"] is None else int(r["turn"]),
                where=str(r["place"] or ""),
                message=str(r["message"] or ""),
            )
            for r in rows
        ]

    def iter_sessions(self, *, batch: int = 500) -> Iterator[SessionRecord]:
        """Every stored session, whole, ordered by condition, user and index, read in batches
        (exports of large runs stay small in memory)."""
        offset = 0
        while True:
            rows = self._conn.execute(
                "SELECT body FROM sessions ORDER BY condition, user_id, idx LIMIT ? OFFSET ?",
                (batch, offset),
            ).fetchall()
            yield from (read_body(SessionRecord, r["body"], self.path) for r in rows)
            if len(rows) < batch:
                return
            offset += batch

    def usage_by_session(self) -> dict[tuple[str, str, int], dict[str, RoleUsage]]:
        """(condition, user, index) -> role -> usage, for every session."""
        rows = self._conn.execute(
            f"SELECT condition, user_id, idx, {_USAGE_COLUMNS} FROM model_calls "
            "GROUP BY condition, user_id, idx, role"
        ).fetchall()
        result: dict[tuple[str, str, int], dict[str, RoleUsage]] = {}
        for r in rows:
            key = (r["condition"], r["user_id"], int(r["idx"]))
            result.setdefault(key, {}).update(usage_rows([r]))
        return result
