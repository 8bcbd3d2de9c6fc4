"""The SQLite backend of run stores: every statement that writes a run lives in this module
(the reads behind pages in ``_queries.py``; the response cache in ``_cache.py``).

A run dir holds ``run.sqlite`` (WAL). A session, its model calls and the memory version
learned from it are written in one transaction, so a session is either wholly stored or
not at all, whatever kills the process.
"""

from __future__ import annotations

import os
import sqlite3
import threading
import uuid
from collections.abc import Collection, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path

from rapport import __version__
from rapport.llm import redact_secrets
from rapport.log import (
    BaseEvent,
    Condition,
    ExperimentConfig,
    Invocation,
    MemoryVersion,
    Run,
    SessionRecord,
    UserRecord,
)

from ._queries import RoleUsage, StoreError, ViewQueries, read_body, usage_rows
from ._queries import where as _filters

RUN_FILE = "run.sqlite"

# Tables every run store has held since the first release; `invocations` came later.
_RUN_TABLES = ("users", "sessions", "model_calls", "memory_versions")

# Fields that may change between invocations on one run dir without changing its results.
_EXECUTION_FIELDS = frozenset({"concurrency", "run_dir", "cache", "model_settings"})

_SCHEMA = """
CREATE TABLE IF NOT EXISTS run (
    id TEXT PRIMARY KEY,
    benchmark TEXT NOT NULL,
    body TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS users (
    user_id TEXT PRIMARY KEY,
    position INTEGER NOT NULL,
    body TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS sessions (
    condition TEXT NOT NULL,
    user_id TEXT NOT NULL,
    idx INTEGER NOT NULL,
    split TEXT NOT NULL,
    status TEXT NOT NULL,
    spec_id TEXT NOT NULL,
    body TEXT NOT NULL,
    attempts INTEGER NOT NULL DEFAULT 1,
    PRIMARY KEY (condition, user_id, idx)
);
CREATE INDEX IF NOT EXISTS sessions_split ON sessions (split, condition);
CREATE TABLE IF NOT EXISTS model_calls (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    condition TEXT NOT NULL,
    user_id TEXT NOT NULL,
    idx INTEGER NOT NULL,
    role TEXT NOT NULL,
    model TEXT NOT NULL,
    prompt_tokens INTEGER NOT NULL,
    completion_tokens INTEGER NOT NULL,
    latency_s REAL NOT NULL,
    cached INTEGER NOT NULL,
    error TEXT
);
CREATE INDEX IF NOT EXISTS model_calls_session ON model_calls (condition, user_id, idx);
CREATE TABLE IF NOT EXISTS invocations (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    body TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS memory_versions (
    condition TEXT NOT NULL,
    user_id TEXT NOT NULL,
    version INTEGER NOT NULL,
    body TEXT NOT NULL,
    PRIMARY KEY (condition, user_id, version)
);
"""


class ConfigMismatchError(ValueError):
    """A run dir already holds a run with a different configuration."""


SQLITE_MAGIC = b"SQLite format 3\x00"


def is_sqlite_file(path: Path) -> bool:
    """Whether ``path`` is a file that starts like an SQLite database."""
    try:
        with path.open("rb") as handle:
            return handle.read(len(SQLITE_MAGIC)) == SQLITE_MAGIC
    except OSError:
        return False


def _empty_file(path: Path) -> bool:
    return path.is_file() and path.stat().st_size == 0


def check_database(path: Path, table: str, what: str, *, also: Collection[str] = ()) -> None:
    """Refuse a database file that is not an intact SQLite database holding ``table``.

    Opens it read-only (nothing is created or changed) and runs SQLite's quick check.
    A database with ``table`` but without one of the tables in ``also`` is damaged.

    Raises:
        StoreError: one line saying what is wrong with it.
    """
    if path.is_dir():
        raise StoreError(f"{path} is a directory, not {what}")
    try:
        size = path.stat().st_size
    except OSError as exc:
        raise StoreError(f"cannot read {path}: {exc.strerror or exc}") from exc
    if size == 0:
        raise StoreError(f"{path} is empty, not {what}")
    if not is_sqlite_file(path):
        raise StoreError(f"{path} is not an SQLite database ({what} expected)")
    try:
        conn = connect_readonly(path, exact=not Path(f"{path}-wal").exists())
        try:
            tables = {
                row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")
            }
            if table not in tables:
                raise StoreError(f"{path} is an SQLite database but not {what}")
            missing = sorted(set(also) - tables)
            if missing:
                raise StoreError(f"{path} is damaged: {what} without its {missing[0]} table")
            verdict = conn.execute("PRAGMA quick_check").fetchone()[0]
        finally:
            conn.close()
    except sqlite3.DatabaseError as exc:
        raise StoreError(f"{path} is damaged ({exc}); {what} expected") from exc
    if verdict != "ok":
        raise StoreError(f"{path} is damaged ({' '.join(str(verdict).split())[:120]})")


def check_run_store(path: Path) -> None:
    """Refuse a file that is not an intact run store (`check_database` with its tables).

    Raises:
        StoreError: one line saying what is wrong with it.
    """
    check_database(path, "run", "a rapport run store", also=_RUN_TABLES)


def _connect(path: Path) -> sqlite3.Connection:
    conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False, timeout=30.0)
    conn.row_factory = sqlite3.Row
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA synchronous=NORMAL")
    conn.execute("PRAGMA busy_timeout=30000")
    return conn


def connect_readonly(path: Path, *, exact: bool = False) -> sqlite3.Connection:
    """A connection that cannot write, even on a disk where nothing can be written.

    With no write-ahead log beside the database (no writer has it open), it is opened
    read-write with ``query_only`` on: SQLite then removes the ``-wal``/``-shm`` files it
    made when the connection closes, so reading a store leaves nothing beside it (``mode=ro``
    leaves them). Otherwise ``mode=ro``, which still needs the WAL index file beside the
    database, which a read-only directory cannot hold when the writer is gone; then the file
    is opened ``immutable`` (no locks, no WAL), which is right because nothing can be writing
    to it there. ``exact`` opens it ``immutable`` at once (creates no ``-wal``/``-shm``
    files): for a database with no write-ahead log beside it, which is then whole in its one
    file.
    """
    uri = path.resolve().as_uri()
    no_log = not Path(f"{path}-wal").exists()
    suffixes = ("?mode=ro&immutable=1",) if exact else ("?mode=ro", "?mode=ro&immutable=1")
    if no_log and not exact and os.access(path, os.W_OK) and os.access(path.parent, os.W_OK):
        suffixes = ("?mode=rw", *suffixes)
    for suffix in suffixes:
        conn = sqlite3.connect(
            uri + suffix, uri=True, isolation_level=None, check_same_thread=False, timeout=30.0
        )
        conn.row_factory = sqlite3.Row
        try:
            conn.execute("SELECT COUNT(*) FROM sqlite_master").fetchone()
        except sqlite3.OperationalError:
            conn.close()
            continue
        conn.execute("PRAGMA query_only=ON")
        return conn
    raise sqlite3.OperationalError(f"cannot open {path} for reading")


@contextmanager
def write_transaction(
    conn: sqlite3.Connection, lock: threading.Lock
) -> Iterator[sqlite3.Connection]:
    """One write transaction (``BEGIN IMMEDIATE``), committed when the block ends, rolled
    back on any exception; ``lock`` serialises the connection's users."""
    with lock:
        conn.execute("BEGIN IMMEDIATE")
        try:
            yield conn
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        conn.execute("COMMIT")


def config_differences(old: ExperimentConfig, new: ExperimentConfig) -> list[str]:
    """The fields (dotted for options) whose values differ, execution-only fields aside."""
    a, b = old.model_dump(mode="json"), new.model_dump(mode="json")
    diffs: list[str] = []
    for key in sorted(set(a) | set(b)):
        if key in _EXECUTION_FIELDS or a.get(key) == b.get(key):
            continue
        diffs.append(f"{key}: {a.get(key)!r} -> {b.get(key)!r}")
    return diffs


class RunStore(ViewQueries):
    """The run log of one run dir, in ``run.sqlite``.

    Args:
        run_dir: the run directory (created when ``create`` is true).
        create: create the directory and database if missing; otherwise a missing
            database raises `FileNotFoundError`.
        readonly: open for reading only (reports, the viewer, exports): nothing is created
            or written, so a run dir on a read-only disk can be read. Implies ``create=False``.
    """

    def __init__(self, run_dir: str | Path, *, create: bool = True, readonly: bool = False) -> None:
        self.run_dir = Path(run_dir)
        self.path = self.run_dir / RUN_FILE
        self.readonly = readonly
        if (readonly or not create) and not self.path.exists():
            raise FileNotFoundError(f"no run found in {self.run_dir} (missing {RUN_FILE})")
        if readonly and _empty_file(self.path):  # a lock made it; nothing was stored
            raise FileNotFoundError(f"no run found in {self.run_dir} ({RUN_FILE} is empty)")
        if self.path.exists() and not (create and _empty_file(self.path)):
            check_run_store(self.path)
        self._lock = threading.Lock()
        if readonly:
            self._conn = connect_readonly(self.path)
            return
        self.run_dir.mkdir(parents=True, exist_ok=True)
        self._conn = _connect(self.path)
        self._conn.executescript(_SCHEMA)
        self._add_columns()

    def _add_columns(self) -> None:
        """Bring a store written before a column existed up to the schema (its sessions
        read as played once)."""
        if self.has_column("sessions", "attempts"):
            return
        with self._transaction() as conn:
            if not self.has_column("sessions", "attempts"):  # again, under the write lock
                conn.execute("ALTER TABLE sessions ADD COLUMN attempts INTEGER NOT NULL DEFAULT 1")

    @classmethod
    def open_readonly(cls, run_dir: str | Path) -> RunStore:
        """The store of an existing run, for reading only.

        Raises:
            FileNotFoundError: the dir holds no ``run.sqlite``.
        """
        return cls(run_dir, readonly=True)

    def close(self) -> None:
        """Close the database connection."""
        self._conn.close()

    def __enter__(self) -> RunStore:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()

    def _transaction(self) -> AbstractContextManager[sqlite3.Connection]:
        return write_transaction(self._conn, self._lock)

    def create_or_open(self, config: ExperimentConfig, conditions: Sequence[Condition] = ()) -> Run:
        """The run of this dir: created from `config` (and its conditions, in order), or the
        stored one if it matches.

        Raises:
            ConfigMismatchError: the stored run has a different config (execution-only
                fields such as ``concurrency`` may differ).
        """
        # Read and insert in one write transaction: two processes never both insert.
        with self._transaction() as conn:
            existing = self.run_or_none()
            if existing is None:
                run = Run(
                    id=uuid.uuid4().hex[:12],
                    benchmark=config.benchmark,
                    config=config,
                    conditions=list(conditions),
                    rapport_version=__version__,
                )
                conn.execute(
                    "INSERT INTO run (id, benchmark, body) VALUES (?, ?, ?)",
                    (run.id, run.benchmark, redact_secrets(run.model_dump_json())),
                )
                return run
        diffs = config_differences(existing.config, config)
        if diffs:
            raise ConfigMismatchError(
                f"{self.run_dir} holds a run with a different config ({'; '.join(diffs)}); "
                "use another --run-dir or the same settings"
            )
        return existing

    def run_or_none(self) -> Run | None:
        """The run header, or None before `create_or_open`."""
        if not self.has_table("run"):
            return None
        row = self._conn.execute("SELECT body FROM run LIMIT 1").fetchone()
        return read_body(Run, row["body"], self.path) if row else None

    def run(self) -> Run:
        """The run header.

        Raises:
            LookupError: no run was created in this dir.
        """
        run = self.run_or_none()
        if run is None:
            raise LookupError(f"{self.path} holds no run header")
        return run

    def add_invocation(self, invocation: Invocation) -> None:
        """Record one invocation of the runner on this run dir (what it ran with)."""
        with self._transaction() as conn:
            conn.execute(
                "INSERT INTO invocations (body) VALUES (?)", (invocation.model_dump_json(),)
            )

    def invocations(self) -> list[Invocation]:
        """The runner's invocations on this run dir, oldest first (none for older runs)."""
        if not self.has_table("invocations"):
            return []
        rows = self._conn.execute("SELECT body FROM invocations ORDER BY id").fetchall()
        return [read_body(Invocation, r["body"], self.path) for r in rows]

    def put_users(self, users: list[UserRecord]) -> None:
        """Store the run's users (kept in the given order; existing ones are left as they are)."""
        with self._transaction() as conn:
            conn.executemany(
                "INSERT OR IGNORE INTO users (user_id, position, body) VALUES (?, ?, ?)",
                [(u.user_id, i, u.model_dump_json()) for i, u in enumerate(users)],
            )

    def users(self) -> list[UserRecord]:
        """The run's users, in order."""
        rows = self._conn.execute("SELECT body FROM users ORDER BY position").fetchall()
        return [read_body(UserRecord, r["body"], self.path) for r in rows]

    def commit_session(self, record: SessionRecord, memory_version: MemoryVersion) -> None:
        """Write a session, its model calls and the memory version after it, atomically.

        A session written again (a retry, a resume) replaces the one before and counts one
        more attempt (`attempts`).
        """
        key = (record.condition, record.user_id, record.index)
        calls = [
            (
                *key,
                c.role,
                c.model,
                c.prompt_tokens,
                c.completion_tokens,
                c.latency_s,
                int(c.cached),
                c.error,
            )
            for c in record.usage
        ]
        with self._transaction() as conn:
            conn.execute(
                "INSERT OR REPLACE INTO sessions "
                "(condition, user_id, idx, split, status, spec_id, body, attempts) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, 1 + COALESCE((SELECT attempts FROM sessions "
                "WHERE condition = ? AND user_id = ? AND idx = ?), 0))",
                (
                    *key,
                    record.split,
                    record.status,
                    record.spec_id,
                    record.model_dump_json(),
                    *key,
                ),
            )
            conn.execute(
                "DELETE FROM model_calls WHERE condition = ? AND user_id = ? AND idx = ?", key
            )
            conn.executemany(
                "INSERT INTO model_calls (condition, user_id, idx, role, model, prompt_tokens, "
                "completion_tokens, latency_s, cached, error) VALUES (?,?,?,?,?,?,?,?,?,?)",
                calls,
            )
            conn.execute(
                "INSERT OR REPLACE INTO memory_versions (condition, user_id, version, body) "
                "VALUES (?, ?, ?, ?)",
                (
                    memory_version.condition,
                    memory_version.user_id,
                    memory_version.version,
                    memory_version.model_dump_json(),
                ),
            )

    def add_events(self, record: SessionRecord, events: Sequence[BaseEvent]) -> bool:
        """Append events to a stored session, in one transaction, leaving its attempts, model
        calls and memory version as they are; False when the session is not stored."""
        key = (record.condition, record.user_id, record.index)
        with self._transaction() as conn:
            row = conn.execute(
                "SELECT body FROM sessions WHERE condition = ? AND user_id = ? AND idx = ?", key
            ).fetchone()
            if row is None:
                return False
            stored = read_body(SessionRecord, row["body"], self.path)
            stored.events.extend(events)
            conn.execute(
                "UPDATE sessions SET body = ? WHERE condition = ? AND user_id = ? AND idx = ?",
                (stored.model_dump_json(), *key),
            )
        return True

    def sessions(
        self,
        condition: str | None = None,
        split: str | None = None,
        user_id: str | None = None,
    ) -> list[SessionRecord]:
        """Stored sessions, optionally filtered, ordered by condition, user and index."""
        where, params = _filters(condition=condition, split=split, user_id=user_id)
        rows = self._conn.execute(
            f"SELECT body FROM sessions{where} ORDER BY condition, user_id, idx", params
        ).fetchall()
        return [read_body(SessionRecord, r["body"], self.path) for r in rows]

    def session_count(self, condition: str | None = None, split: str | None = None) -> int:
        """How many sessions are stored (optionally filtered)."""
        where, params = _filters(condition=condition, split=split)
        row = self._conn.execute(f"SELECT COUNT(*) AS n FROM sessions{where}", params).fetchone()
        return int(row["n"])

    def done(self, condition: str, user_id: str) -> set[int]:
        """The indices of the user's stored sessions under a condition."""
        rows = self._conn.execute(
            "SELECT idx FROM sessions WHERE condition = ? AND user_id = ?", (condition, user_id)
        ).fetchall()
        return {int(r["idx"]) for r in rows}

    def error_indices(self, condition: str, user_id: str) -> set[int]:
        """The indices of the user's stored sessions under a condition with status ``error``."""
        rows = self._conn.execute(
            "SELECT idx FROM sessions WHERE condition = ? AND user_id = ? AND status = 'error'",
            (condition, user_id),
        ).fetchall()
        return {int(r["idx"]) for r in rows}

    def memory_version(self, condition: str, user_id: str, version: int) -> MemoryVersion | None:
        """One stored memory version of a user under a condition, if stored."""
        row = self._conn.execute(
            "SELECT body FROM memory_versions WHERE condition = ? AND user_id = ? AND version = ?",
            (condition, user_id, version),
        ).fetchone()
        return read_body(MemoryVersion, row["body"], self.path) if row else None

    def latest_memory(self, condition: str, user_id: str) -> MemoryVersion | None:
        """The user's newest memory version under a condition, if any."""
        row = self._conn.execute(
            "SELECT body FROM memory_versions WHERE condition = ? AND user_id = ? "
            "ORDER BY version DESC LIMIT 1",
            (condition, user_id),
        ).fetchone()
        return read_body(MemoryVersion, row["body"], self.path) if row else None

    def memory_versions(
        self, condition: str | None = None, user_id: str | None = None
    ) -> list[MemoryVersion]:
        """Stored memory versions, ordered by condition, user and version."""
        where, params = _filters(condition=condition, user_id=user_id)
        rows = self._conn.execute(
            f"SELECT body FROM memory_versions{where} ORDER BY condition, user_id, version",
            params,
        ).fetchall()
        return [read_body(MemoryVersion, r["body"], self.path) for r in rows]

    def usage_by_role(self) -> dict[str, RoleUsage]:
        """Call counts and token totals per model role, over all stored sessions."""
        rows = self._conn.execute(
            "SELECT role, COUNT(*) AS calls, SUM(cached AND error IS NULL) AS cached_calls, "
            "SUM(prompt_tokens) AS prompt_tokens, SUM(completion_tokens) AS completion_tokens, "
            "SUM(error IS NOT NULL) AS errors FROM model_calls GROUP BY role ORDER BY role"
        ).fetchall()
        return usage_rows(rows)
