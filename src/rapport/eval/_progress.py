"""A progress bar with ETA over sessions, on stderr, only when stderr is a terminal."""

from __future__ import annotations

import sys

from tqdm import tqdm


class Progress:
    """Counts finished sessions.

    Args:
        total: sessions in the whole run.
        done: sessions already stored (a resumed run starts there).
        enabled: False hides the bar; it is also hidden when stderr is not a terminal.
    """

    def __init__(self, total: int, done: int = 0, *, enabled: bool = True) -> None:
        show = enabled and sys.stderr.isatty()
        self._bar = tqdm(
            total=total,
            initial=done,
            unit="session",
            file=sys.stderr,
            disable=not show,
            dynamic_ncols=True,
        )

    def advance(self, *, errors: int = 0) -> None:
        """One more session finished."""
        if errors:
            self._bar.set_postfix(errors=errors, refresh=False)
        self._bar.update(1)

    def __enter__(self) -> Progress:
        return self

    def __exit__(self, *_exc: object) -> None:
        self._bar.close()
