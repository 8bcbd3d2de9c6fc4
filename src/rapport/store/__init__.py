"""Persistence of run logs, memory versions and the shared model response cache (SQLite)."""

from ._cache import SqliteCache, default_cache_path
from ._lock import RunDirBusy, RunDirLock
from ._pack import pack_run
from ._queries import ErrorRow, SessionRow
from ._service import (
    IdempotencyConflict,
    ServiceStore,
    UserMemory,
    VersionConflict,
    key_digest,
)
from ._service import Job as ServiceJob
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
    "IdempotencyConflict",
    "RoleUsage",
    "RunDirBusy",
    "RunDirLock",
    "RunStore",
    "ServiceJob",
    "ServiceStore",
    "SessionRow",
    "SqliteCache",
    "StoreError",
    "UserMemory",
    "VersionConflict",
    "check_database",
    "check_run_store",
    "config_differences",
    "connect_readonly",
    "default_cache_path",
    "is_sqlite_file",
    "key_digest",
    "pack_run",
    "write_transaction",
]
