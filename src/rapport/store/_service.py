"""The memory service's SQLite store: tenants and their API keys, each user's memory and its
versions, the durable queue of learn jobs, and idempotency records. Every statement the
service runs lives in this module, so a second backend is one more module.

Learning is a job: accepted into ``jobs`` in the same transaction as its idempotency record,
claimed with a lease, and finished in one transaction that writes the user's new memory
version (checked against the version it started from) and marks the job done. A process
killed anywhere in between leaves the job claimed; when its lease runs out another worker
claims it again, so an accepted job is learned exactly once.
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from rapport.log import MemoryState

from ._queries import StoreError

JobStatus = Literal["queued", "running", "done", "failed"]
_USER_TABLES = ("memories", "versions", "jobs", "idempotency", "conversations")

_SCHEMA = """
CREATE TABLE IF NOT EXISTS tenants (
    name TEXT PRIMARY KEY,
    created REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS api_keys (
    digest TEXT PRIMARY KEY,
    tenant TEXT NOT NULL REFERENCES tenants (name) ON DELETE CASCADE,
    created REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS memories (
    tenant TEXT NOT NULL,
    user_id TEXT NOT NULL,
    version INTEGER NOT NULL,
    state TEXT NOT NULL,
    updated REAL NOT NULL,
    PRIMARY KEY (tenant, user_id)
);
CREATE TABLE IF NOT EXISTS versions (
    tenant TEXT NOT NULL,
    user_id TEXT NOT NULL,
    version INTEGER NOT NULL,
    state TEXT NOT NULL,
    job INTEGER,
    created REAL NOT NULL,
    PRIMARY KEY (tenant, user_id, version)
);
CREATE TABLE IF NOT EXISTS jobs (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    tenant TEXT NOT NULL,
    user_id TEXT NOT NULL,
    conversation TEXT NOT NULL,
    status TEXT NOT NULL,
    attempts INTEGER NOT NULL DEFAULT 0,
    lease_until REAL NOT NULL DEFAULT 0,
    version INTEGER,
    error TEXT NOT NULL DEFAULT '',
    created REAL NOT NULL,
    finished REAL
);
CREATE INDEX IF NOT EXISTS jobs_open ON jobs (status, lease_until);
CREATE INDEX IF NOT EXISTS jobs_user ON jobs (tenant, user_id);
CREATE TABLE IF NOT EXISTS conversations (
    tenant TEXT NOT NULL,
    user_id TEXT NOT NULL,
    conversation TEXT NOT NULL,
    messages TEXT NOT NULL,
    last_seen REAL NOT NULL,
    PRIMARY KEY (tenant, conversation)
);
CREATE INDEX IF NOT EXISTS conversations_idle ON conversations (last_seen);
CREATE TABLE IF NOT EXISTS idempotency (
    tenant TEXT NOT NULL,
    key TEXT NOT NULL,
    user_id TEXT NOT NULL,
    request TEXT NOT NULL,
    job INTEGER NOT NULL,
    PRIMARY KEY (tenant, key)
);
"""


def key_digest(key: str) -> str:
    """The stored form of an API key (the key itself is never stored)."""
    return hashlib.sha256(key.encode()).hexdigest()


@dataclass(frozen=True)
class Job:
    """One accepted learn job."""

    id: int
    tenant: str
    user_id: str
    conversation: list[dict[str, Any]]
    status: JobStatus
    attempts: int
    version: int | None
    error: str


@dataclass(frozen=True)
class UserMemory:
    """A user's memory now: its version (0: nothing learned) and state."""

    version: int
    state: MemoryState


class VersionConflict(StoreError):
    """Another writer moved the user's memory on since this one read it."""


class IdempotencyConflict(StoreError):
    """An idempotency key reused for a different request."""


class ServiceStore:
    """The memory service's SQLite database (WAL; one connection per thread).

    Args:
        path: the database file (created with mode 0600 when missing).
    """

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self._local = threading.local()
        if not self.path.exists():
            self.path.parent.mkdir(parents=True, exist_ok=True)
            os.close(os.open(self.path, os.O_CREAT | os.O_WRONLY, 0o600))
        try:
            self._db().executescript(_SCHEMA)
        except sqlite3.Error as exc:
            raise StoreError(f"{self.path}: cannot set up the memory database: {exc}") from exc

    def _db(self) -> sqlite3.Connection:
        db: sqlite3.Connection | None = getattr(self._local, "db", None)
        if db is None:
            try:
                db = sqlite3.connect(self.path, timeout=30, isolation_level=None)
                db.execute("PRAGMA journal_mode=WAL")
                db.execute("PRAGMA foreign_keys=ON")
            except sqlite3.Error as exc:
                raise StoreError(f"{self.path}: cannot open the memory database: {exc}") from exc
            self._local.db = db
        return db

    @contextmanager
    def _write(self) -> Iterator[sqlite3.Connection]:
        db = self._db()
        try:
            db.execute("BEGIN IMMEDIATE")
        except sqlite3.Error as exc:
            raise StoreError(f"{self.path}: {exc}") from exc
        try:
            yield db
        except BaseException:
            db.execute("ROLLBACK")
            raise
        try:
            db.execute("COMMIT")
        except sqlite3.Error as exc:
            db.execute("ROLLBACK")
            raise StoreError(f"{self.path}: {exc}") from exc

    def close(self) -> None:
        """Close this thread's connection."""
        db = getattr(self._local, "db", None)
        if db is not None:
            db.close()
            self._local.db = None

    # Tenants and keys.

    def add_tenant(self, name: str) -> None:
        """Create a tenant (an existing one is kept)."""
        with self._write() as db:
            db.execute("INSERT OR IGNORE INTO tenants VALUES (?, ?)", (name, time.time()))

    def add_key(self, tenant: str, key: str) -> None:
        """Store a new API key's digest for a tenant.

        Raises:
            StoreError: no such tenant.
        """
        with self._write() as db:
            if db.execute("SELECT 1 FROM tenants WHERE name = ?", (tenant,)).fetchone() is None:
                raise StoreError(f"no tenant '{tenant}'")
            db.execute(
                "INSERT INTO api_keys VALUES (?, ?, ?)", (key_digest(key), tenant, time.time())
            )

    def revoke_keys(self, tenant: str) -> int:
        """Drop every key of a tenant; returns how many."""
        with self._write() as db:
            return db.execute("DELETE FROM api_keys WHERE tenant = ?", (tenant,)).rowcount

    def tenant_of(self, key: str) -> str | None:
        """The tenant an API key belongs to (None: no such key)."""
        row = (
            self._db()
            .execute("SELECT tenant FROM api_keys WHERE digest = ?", (key_digest(key),))
            .fetchone()
        )
        return None if row is None else str(row[0])

    def tenants(self) -> list[str]:
        """Every tenant's name."""
        return [r[0] for r in self._db().execute("SELECT name FROM tenants ORDER BY name")]

    # Memories.

    def memory(self, tenant: str, user_id: str) -> UserMemory:
        """A user's memory now (version 0 and an empty state for a user never learned)."""
        row = (
            self._db()
            .execute(
                "SELECT version, state FROM memories WHERE tenant = ? AND user_id = ?",
                (tenant, user_id),
            )
            .fetchone()
        )
        if row is None:
            return UserMemory(0, MemoryState())
        return UserMemory(int(row[0]), MemoryState.model_validate_json(row[1]))

    def users(self, tenant: str) -> list[tuple[str, int]]:
        """A tenant's users with their memory versions."""
        rows = self._db().execute(
            "SELECT user_id, version FROM memories WHERE tenant = ? ORDER BY user_id", (tenant,)
        )
        return [(str(u), int(v)) for u, v in rows]

    def versions(self, tenant: str, user_id: str) -> list[tuple[int, float, MemoryState]]:
        """Every version of a user's memory, oldest first: (version, created, state)."""
        rows = self._db().execute(
            "SELECT version, created, state FROM versions WHERE tenant = ? AND user_id = ? "
            "ORDER BY version",
            (tenant, user_id),
        )
        return [(int(v), float(c), MemoryState.model_validate_json(s)) for v, c, s in rows]

    def import_memories(self, tenant: str, states: dict[str, MemoryState]) -> None:
        """Put users' memories in as their first version (a restore of exports, or seeding a
        new service); users that already have one are refused whole.

        Raises:
            VersionConflict: one of the users already has a memory.
        """
        now = time.time()
        with self._write() as db:
            for user_id, state in states.items():
                body = state.model_dump_json()
                added = db.execute(
                    "INSERT OR IGNORE INTO memories VALUES (?, ?, 1, ?, ?)",
                    (tenant, user_id, body, now),
                ).rowcount
                if added != 1:
                    raise VersionConflict(f"{user_id} already has a memory")
                db.execute(
                    "INSERT INTO versions VALUES (?, ?, 1, ?, NULL, ?)",
                    (tenant, user_id, body, now),
                )

    def forget(self, tenant: str, user_id: str) -> int:
        """Delete everything of a user: memory, versions, jobs, idempotency records.
        Returns the rows deleted."""
        where = "WHERE tenant = ? AND user_id = ?"
        with self._write() as db:
            return sum(
                db.execute(f"DELETE FROM {table} {where}", (tenant, user_id)).rowcount
                for table in _USER_TABLES
            )

    def holds(self, tenant: str, user_id: str) -> int:
        """How many rows of any table still name the user (0 after `forget`)."""
        db, where = self._db(), "WHERE tenant = ? AND user_id = ?"
        return sum(
            int(
                db.execute(f"SELECT count(*) FROM {table} {where}", (tenant, user_id)).fetchone()[0]
            )
            for table in _USER_TABLES
        )

    # Jobs.

    def enqueue(
        self,
        tenant: str,
        user_id: str,
        conversation: list[dict[str, Any]],
        idempotency_key: str | None = None,
    ) -> tuple[Job, bool]:
        """Accept a learn job; with an idempotency key already used for the same request,
        the job accepted then. Returns (job, created).

        Raises:
            IdempotencyConflict: the key was used for a different user or conversation.
        """
        body = json.dumps(conversation, sort_keys=True)
        request = hashlib.sha256(f"{user_id}\0{body}".encode()).hexdigest()
        with self._write() as db:
            if idempotency_key is not None:
                row = db.execute(
                    "SELECT request, job FROM idempotency WHERE tenant = ? AND key = ?",
                    (tenant, idempotency_key),
                ).fetchone()
                if row is not None:
                    if row[0] != request:
                        raise IdempotencyConflict(
                            "this Idempotency-Key was used for a different request"
                        )
                    return self._held(db, int(row[1])), False
            job_id = db.execute(
                "INSERT INTO jobs (tenant, user_id, conversation, status, created) "
                "VALUES (?, ?, ?, 'queued', ?)",
                (tenant, user_id, body, time.time()),
            ).lastrowid
            assert job_id is not None
            if idempotency_key is not None:
                db.execute(
                    "INSERT INTO idempotency VALUES (?, ?, ?, ?, ?)",
                    (tenant, idempotency_key, user_id, request, job_id),
                )
            return self._held(db, job_id), True

    def job(self, tenant: str, job_id: int) -> Job | None:
        """A tenant's job (None: no such job for this tenant)."""
        job = self._job(self._db(), job_id)
        return job if job is not None and job.tenant == tenant else None

    def pending(self, tenant: str, user_id: str) -> int:
        """The user's jobs not finished yet."""
        row = (
            self._db()
            .execute(
                "SELECT count(*) FROM jobs WHERE tenant = ? AND user_id = ? "
                "AND status IN ('queued', 'running')",
                (tenant, user_id),
            )
            .fetchone()
        )
        return int(row[0])

    def claim(self, lease_s: float) -> Job | None:
        """Take the oldest job that is queued, or running with its lease run out (its
        worker died), for `lease_s` seconds; None when there is none. A user's jobs are
        claimed in order: a user with a job still running under its lease has none claimed."""
        now = time.time()
        with self._write() as db:
            row = db.execute(
                "SELECT id FROM jobs j WHERE (status = 'queued' OR "
                "(status = 'running' AND lease_until < ?)) AND NOT EXISTS ("
                "SELECT 1 FROM jobs o WHERE o.tenant = j.tenant AND o.user_id = j.user_id "
                "AND o.id < j.id AND o.status IN ('queued', 'running')) ORDER BY id LIMIT 1",
                (now,),
            ).fetchone()
            if row is None:
                return None
            db.execute(
                "UPDATE jobs SET status = 'running', attempts = attempts + 1, lease_until = ? "
                "WHERE id = ?",
                (now + lease_s, row[0]),
            )
            return self._job(db, int(row[0]))

    def finish(self, job: Job, read_version: int, state: MemoryState) -> int:
        """Write the user's memory learned by `job` and mark the job done, in one
        transaction; returns the new version.

        Raises:
            VersionConflict: the user's memory is no longer at `read_version`, or the job
                was finished by another worker.
        """
        now, body = time.time(), state.model_dump_json()
        with self._write() as db:
            status = db.execute("SELECT status FROM jobs WHERE id = ?", (job.id,)).fetchone()
            if status is None or status[0] != "running":
                raise VersionConflict(f"job {job.id} is no longer running")
            version = read_version + 1
            if read_version == 0:
                moved = db.execute(
                    "INSERT OR IGNORE INTO memories VALUES (?, ?, ?, ?, ?)",
                    (job.tenant, job.user_id, version, body, now),
                ).rowcount
            else:
                moved = db.execute(
                    "UPDATE memories SET version = ?, state = ?, updated = ? "
                    "WHERE tenant = ? AND user_id = ? AND version = ?",
                    (version, body, now, job.tenant, job.user_id, read_version),
                ).rowcount
            if moved != 1:
                raise VersionConflict(f"{job.user_id}'s memory moved on past {read_version}")
            db.execute(
                "INSERT INTO versions VALUES (?, ?, ?, ?, ?, ?)",
                (job.tenant, job.user_id, version, body, job.id, now),
            )
            db.execute(
                "UPDATE jobs SET status = 'done', version = ?, finished = ? WHERE id = ?",
                (version, now, job.id),
            )
            return version

    def fail(self, job: Job, error: str, *, retry: bool) -> None:
        """Record a failed attempt: queued again when `retry`, else failed for good."""
        status = "queued" if retry else "failed"
        with self._write() as db:
            db.execute(
                "UPDATE jobs SET status = ?, error = ?, lease_until = 0, finished = ? "
                "WHERE id = ? AND status = 'running'",
                (status, error[:2000], None if retry else time.time(), job.id),
            )

    # The proxy's open conversations.

    def note(
        self, tenant: str, user_id: str, conversation: str, messages: list[dict[str, Any]]
    ) -> None:
        """Keep a conversation's messages so far (replacing what was kept)."""
        with self._write() as db:
            row = db.execute(
                "SELECT user_id FROM conversations WHERE tenant = ? AND conversation = ?",
                (tenant, conversation),
            ).fetchone()
            if row is not None and row[0] != user_id:
                raise IdempotencyConflict("this conversation id belongs to another user")
            db.execute(
                "INSERT OR REPLACE INTO conversations VALUES (?, ?, ?, ?, ?)",
                (tenant, user_id, conversation, json.dumps(messages), time.time()),
            )

    def end(self, tenant: str, conversation: str) -> Job | None:
        """Queue an open conversation to learn and close it, in one transaction (None:
        no such open conversation)."""
        with self._write() as db:
            row = db.execute(
                "SELECT user_id, messages FROM conversations WHERE tenant = ? AND conversation = ?",
                (tenant, conversation),
            ).fetchone()
            if row is None:
                return None
            db.execute(
                "DELETE FROM conversations WHERE tenant = ? AND conversation = ?",
                (tenant, conversation),
            )
            job_id = db.execute(
                "INSERT INTO jobs (tenant, user_id, conversation, status, created) "
                "VALUES (?, ?, ?, 'queued', ?)",
                (tenant, row[0], row[1], time.time()),
            ).lastrowid
            assert job_id is not None
            return self._job(db, job_id)

    def idle(self, before: float) -> list[tuple[str, str]]:
        """Open conversations last seen before a time: (tenant, conversation)."""
        rows = self._db().execute(
            "SELECT tenant, conversation FROM conversations WHERE last_seen < ?", (before,)
        )
        return [(str(t), str(c)) for t, c in rows]

    def _held(self, db: sqlite3.Connection, job_id: int) -> Job:
        job = self._job(db, job_id)
        if job is None:
            raise StoreError(f"job {job_id} vanished inside its own transaction")
        return job

    def _job(self, db: sqlite3.Connection, job_id: int) -> Job | None:
        row = db.execute(
            "SELECT id, tenant, user_id, conversation, status, attempts, version, error "
            "FROM jobs WHERE id = ?",
            (job_id,),
        ).fetchone()
        if row is None:
            return None
        return Job(
            id=int(row[0]),
            tenant=str(row[1]),
            user_id=str(row[2]),
            conversation=json.loads(row[3]),
            status=row[4],
            attempts=int(row[5]),
            version=None if row[6] is None else int(row[6]),
            error=str(row[7]),
        )
