"""What the viewer reads: a read-only store, and the run's summary computed once and
rebuilt in the background when the store changes (a run still in progress)."""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from pathlib import Path

from rapport.log import Run
from rapport.report import Report, build_report
from rapport.store import ErrorRow, RunStore

PAGE_SIZE = 50
REFRESH_AFTER = 10.0
"""Seconds a summary is kept before a changed store rebuilds it."""


@dataclass
class Page:
    """Where a paginated list stands."""

    number: int
    size: int
    total: int

    @property
    def offset(self) -> int:
        """Rows before this page."""
        return (self.number - 1) * self.size

    @property
    def last(self) -> int:
        """The last page number (at least 1)."""
        return max(1, -(-self.total // self.size))

    @classmethod
    def of(cls, number: int, total: int, size: int = PAGE_SIZE) -> Page:
        """Page `number` (clamped to the pages there are)."""
        page = cls(number=1, size=size, total=total)
        page.number = min(max(1, number), page.last)
        return page


class RunData:
    """A run dir opened for the viewer.

    Args:
        run_dir: the run dir.
        seed: the bootstrap seed of the summary.
        page_size: rows per page of the paginated lists.

    Raises:
        FileNotFoundError: the dir holds no run.
    """

    def __init__(self, run_dir: str | Path, *, seed: int = 0, page_size: int = PAGE_SIZE) -> None:
        self.run_dir = Path(run_dir)
        self.seed = seed
        self.page_size = page_size
        self.store = RunStore.open_readonly(self.run_dir)
        run = self.store.run_or_none()
        if run is None:
            self.store.close()
            raise FileNotFoundError(f"no run found in {self.run_dir} (no run header)")
        self.run: Run = run
        self._lock = threading.Lock()
        self._version = self.store.data_version()
        try:
            self._summary, self._errors = self._load()
        except BaseException:
            self.store.close()  # a damaged row: leave nothing open beside the store
            raise
        self._built = time.monotonic()
        self._rebuilding = False

    def page(self, number: int | None, total: int) -> Page:
        """Page `number` of a list of `total` rows."""
        return Page.of(number or 1, total, self.page_size)

    def close(self) -> None:
        """Close the store."""
        self.store.close()

    def summary(self) -> Report:
        """The run's summary (scores only); a changed store rebuilds it in the background."""
        with self._lock:
            version = self.store.data_version()
            due = time.monotonic() - self._built >= REFRESH_AFTER
            if version != self._version and due and not self._rebuilding:
                self._rebuilding = True
                threading.Thread(target=self._rebuild, args=(version,), daemon=True).start()
            return self._summary

    def _load(self) -> tuple[Report, list[ErrorRow]]:
        # Its own connections: the store's belongs to the server's loop. Both read every
        # session body once, so they are done here and kept, not per request.
        summary = build_report(self.run_dir, seed=self.seed, light=True)
        with RunStore.open_readonly(self.run_dir) as store:
            errors = store.error_rows(limit=-1)
        return summary, errors

    def errors(self) -> list[ErrorRow]:
        """Every error event of the run (as of the summary)."""
        self.summary()
        with self._lock:
            return self._errors

    def _rebuild(self, version: int) -> None:
        try:
            summary, errors = self._load()
            with self._lock:
                self._summary, self._errors, self._version = summary, errors, version
        finally:
            with self._lock:
                self._built = time.monotonic()
                self._rebuilding = False

    def conditions(self) -> list[str]:
        """Conditions in the summary's order."""
        return list(self.summary().conditions) or self.store.conditions()
