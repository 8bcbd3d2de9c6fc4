"""Errors the CLI turns into one line on stderr and exit code 2, and the checks that raise them."""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from rapport.eval import one_line
from rapport.store import RUN_FILE, is_sqlite_file

_STORE_FILES = (RUN_FILE, f"{RUN_FILE}-wal", f"{RUN_FILE}-shm", "cache.sqlite")


class UsageError(Exception):
    """Bad input: unknown name, bad file, impossible numbers. Nothing has been written."""


def output_path(flag: str, text: str) -> Path:
    """A path given on the command line for an output (an empty one is refused: Path("")
    would be the working directory).

    Raises:
        UsageError: the text is empty.
    """
    if not text.strip():
        raise UsageError(f"{flag} needs a file name, got '{text}'")
    return Path(text)


def directory_path(name: str, text: str) -> Path:
    """A directory given on the command line, as the argument `name` (``RUN_DIR``, ``--out``).

    An empty one is refused: Path("") is the working directory, so a command would read
    whatever run it holds and write beside it.

    Raises:
        UsageError: the text is empty.
    """
    if not text.strip():
        raise UsageError(f"{name} needs a directory name, got '{text}'")
    return Path(text)


def output_file(flag: str, path: str | Path) -> Path:
    """A file an output may be written to: never a store, a directory or a missing place.

    Raises:
        UsageError: the target is a directory, lies in no directory, cannot be written,
            or is (or would clobber) a run store or any SQLite database.
    """
    target = output_path(flag, path) if isinstance(path, str) else path
    if target.name in _STORE_FILES or target.name.endswith((".sqlite-wal", ".sqlite-shm")):
        raise UsageError(f"{flag} {target} would overwrite a run store")
    if target.is_dir():
        raise UsageError(f"{flag} {target} is a directory")
    if target.exists() and is_sqlite_file(target):
        raise UsageError(f"{flag} {target} is an SQLite database (a store?); not overwriting it")
    existing = target.parent
    while not existing.exists() and existing != existing.parent:
        existing = existing.parent  # missing directories are made when it is written
    if not existing.is_dir():
        raise UsageError(f"{flag} {target}: {existing} is not a directory")
    if not os.access(existing, os.W_OK | os.X_OK) or (
        target.exists() and not os.access(target, os.W_OK)
    ):
        raise UsageError(f"{flag} {target}: {existing} is not writable")
    return target


@contextmanager
def reading_stores(*run_dirs: Path) -> Iterator[None]:
    """Turn an SQLite error met while reading runs' stores (a table missing, a text column
    that is not UTF-8) into one line naming the store.

    Raises:
        UsageError: an `sqlite3.DatabaseError` came out of the block.
    """
    try:
        yield
    except sqlite3.DatabaseError as exc:
        stores = [str(run_dir / RUN_FILE) for run_dir in run_dirs]
        where = stores[0] if len(stores) == 1 else f"one of {', '.join(stores)}"
        raise UsageError(f"run store {where}: {one_line(exc)}") from exc
