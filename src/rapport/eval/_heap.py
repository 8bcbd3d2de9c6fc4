"""The garbage collector's share of a run: what exists before the sessions start is left out
of its passes while they run."""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator


@contextlib.contextmanager
def frozen_heap() -> Iterator[None]:
    """Keep what exists before the sessions start out of the garbage collector's passes
    while they run.

    The imported libraries and the prepared experiment are some 10^5 objects; a full
    collection walks all of them and stalls the event loop for tens of milliseconds, with
    every session in flight waiting. A heap the caller froze is left as it is.
    """
    if gc.get_freeze_count():
        yield
        return
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()
