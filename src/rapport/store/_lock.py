"""One process per run dir: an exclusive ``flock`` on the run's store."""

from __future__ import annotations

import os
from pathlib import Path

from ._queries import StoreError
from ._sqlite import RUN_FILE


class RunDirBusy(StoreError):
    """Another process is running this run dir."""


class RunDirLock:
    """An exclusive lock on a run dir, held by the process running it.

    It is a ``flock`` on the run's ``run.sqlite`` (created empty if missing: SQLite reads an
    empty file as an empty database). SQLite's own locks are ``fcntl`` locks, which do not
    interact with it. The operating system drops it when the process ends, however it ends
    (``kill -9`` included), so a stale lock never blocks a resume, and no lock file is left.
    """

    def __init__(self, run_dir: Path) -> None:
        self.path = Path(run_dir) / RUN_FILE
        self._fd: int | None = None

    def acquire(self) -> None:
        """Take the lock (the run dir must exist).

        Raises:
            RunDirBusy: another process holds it.
        """
        import fcntl

        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(fd)
            raise RunDirBusy(
                f"run dir {self.path.parent} is in use by another rapport process; "
                "wait for it or use another --run-dir"
            ) from None
        self._fd = fd

    def release(self) -> None:
        """Drop the lock."""
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None
