"""Persistence of run logs, memory versions and the shared model response cache (SQLite)."""

from ._cache import SqliteCache, default_cache_path
from ._lock import RunDirBusy, RunDirLock
from ._pack import pack_run
from ._queries import ErrorRow, SessionRow
from ._sqlite import (
    RUN_FILE,
    ConfigMismatchError,
    RoleUsage,
    RunStore,
    StoreError,
    check_database,
    check_run_store,
    config_differences,
    connect_readonly,
    is_sqlite_file,
    write_transaction,
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
    "connect_readonly",
    "default_cache_path",
    "is_sqlite_file",
    "pack_run",
    "write_transaction",
]
