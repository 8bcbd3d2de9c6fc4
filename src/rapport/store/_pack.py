"""Packing a run dir for version control: one self-contained, compact ``run.sqlite``."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from ._lock import RunDirLock
from ._sqlite import RUN_FILE, check_run_store


def pack_run(run_dir: str | Path) -> Path:
    """Make a run's store one file that can be committed and read where nothing may be
    written: the write-ahead log folded in, rollback-journal mode (a reader then creates no
    ``-wal``/``-shm`` file beside it), free pages dropped (``VACUUM``). A run resumed later
    switches the store back to WAL; pack it again before committing.

    Returns:
        The packed ``run.sqlite``.

    Raises:
        FileNotFoundError: the dir holds no ``run.sqlite``.
        RunDirBusy: a process is running the dir.
        StoreError: the file is not an intact run store.
    """
    path = Path(run_dir) / RUN_FILE
    if not path.is_file():
        raise FileNotFoundError(f"no run found in {run_dir} (missing {RUN_FILE})")
    lock = RunDirLock(Path(run_dir))
    lock.acquire()
    try:
        check_run_store(path)
        conn = sqlite3.connect(path, isolation_level=None, timeout=30.0)
        try:
            conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            conn.execute("PRAGMA journal_mode=DELETE")
            conn.execute("VACUUM")
        finally:
            conn.close()
    finally:
        lock.release()
    return path
