"""Persistence of run logs, memory versions and the shared model response cache (SQLite)."""

from ._pack import pack_run
from ._queries import ErrorRow, SessionRow
from ._sqlite import (
    RUN_FILE,
    ConfigMismatchError,
    RoleUsage,
    RunDirBusy,
    RunDirLock,
    RunStore,
    SqliteCache,
    StoreError,
    check_database,
    check_run_store,
    config_differences,
    default_cache_path,
    is_sqlite_file,
)

__all__ = [
    "RUN_FILE",
    "ConfigMismatchError",
    "ErrorRow",
    "RoleUsage",
    "RunDirBusy",
    "RunDirLock",
    "RunStore",
    "SessionRow",
    "SqliteCache",
    "StoreError",
    "check_database",
    "check_run_store",
    "config_differences",
    "default_cache_path",
    "is_sqlite_file",
    "pack_run",
]
