"""The model response cache shared by runs: one SQLite file under ``$RAPPORT_HOME``."""

from __future__ import annotations

import os
import sqlite3
import threading
from pathlib import Path

from rapport import rapport_home
from rapport.llm import Completion

from ._queries import StoreError
from ._sqlite import _connect, check_database


def default_cache_path() -> Path:
    """Where the shared response cache lives: ``rapport_home()/cache.sqlite``."""
    return rapport_home() / "cache.sqlite"


class SqliteCache:
    """A `rapport.llm.ResponseCache` in SQLite, shared by runs and processes.

    Every `put` commits at once, so a killed process keeps the calls it finished; WAL lets
    other processes read while one writes.

    Args:
        path: the database file (default: `default_cache_path()`).
    """

    def __init__(self, path: str | Path | None = None) -> None:
        self.path = Path(path) if path is not None else default_cache_path()
        self._lock = threading.Lock()
        self._db: sqlite3.Connection | None = None

    def check(self, *, write: bool = True) -> None:
        """Refuse a cache file that is damaged or not a response cache, or (with `write`) a
        cache that cannot be written where it lives (reads only).

        Raises:
            StoreError: one line saying what is wrong; remove the file or run without cache.
        """
        if self.path.exists():
            try:
                check_database(self.path, "responses", "rapport's response cache")
            except StoreError as exc:
                raise StoreError(f"response cache: {exc} (remove it, or use --no-cache)") from exc
        folder = self.path.parent
        while not folder.exists() and folder != folder.parent:
            folder = folder.parent  # missing directories are made on first use
        if not folder.is_dir():
            raise StoreError(
                f"response cache: {folder} is not a directory (check RAPPORT_HOME, "
                "or use --no-cache)"
            )
        # SQLite writes its -wal and -shm files beside the database.
        targets = [folder] + ([self.path] if self.path.exists() else [])
        if write and not all(os.access(t, os.W_OK) for t in targets):
            raise StoreError(f"response cache: {self.path} is not writable (or use --no-cache)")

    @property
    def _conn(self) -> sqlite3.Connection:
        # Opened on first use, so building a cache writes nothing until a call is made.
        if self._db is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._db = _connect(self.path)
            self._db.execute(
                "CREATE TABLE IF NOT EXISTS responses (key TEXT PRIMARY KEY, body TEXT NOT NULL)"
            )
        return self._db

    def get(self, key: str) -> Completion | None:
        """The stored completion for a request key, if any."""
        with self._lock:
            row = self._conn.execute("SELECT body FROM responses WHERE key = ?", (key,)).fetchone()
        return Completion.model_validate_json(row["body"]) if row else None

    def put(self, key: str, completion: Completion) -> None:
        """Store a completion (committed before returning)."""
        with self._lock:
            self._conn.execute(
                "INSERT OR REPLACE INTO responses (key, body) VALUES (?, ?)",
                (key, completion.model_dump_json()),
            )

    def clear(self) -> int:
        """Delete every entry; returns how many there were."""
        with self._lock:
            n = int(self._conn.execute("SELECT COUNT(*) FROM responses").fetchone()[0])
            self._conn.execute("DELETE FROM responses")
            self._conn.execute("VACUUM")
        return n

    def __len__(self) -> int:
        with self._lock:
            row = self._conn.execute("SELECT COUNT(*) AS n FROM responses").fetchone()
        return int(row["n"])

    def close(self) -> None:
        """Close the database connection."""
        if self._db is not None:
            self._db.close()
            self._db = None
