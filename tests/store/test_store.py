"""The run store: round trips, one transaction per session, config checks, the cache."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from rapport.llm import Completion, ModelCall, Usage
from rapport.log import (
    ExperimentConfig,
    MemoryItem,
    MemoryState,
    MemoryVersion,
    SessionRecord,
    UserRecord,
)
from rapport.store import ConfigMismatchError, RunStore, SqliteCache, StoreError


def _config(run_dir: Path, **fields: object) -> ExperimentConfig:
    return ExperimentConfig.model_validate({"benchmark": "scripted", "run_dir": run_dir, **fields})


def _record(condition: str, user: str, index: int, split: str = "eval") -> SessionRecord:
    return SessionRecord.model_validate(
        {
            "condition": condition,
            "user_id": user,
            "index": index,
            "spec_id": f"{user}-{index}",
            "split": split,
            "scores": {"hit": float(index)},
            "usage": [
                ModelCall(role="agent", model="m", prompt_tokens=10, completion_tokens=3),
                ModelCall(role="user", model="m", prompt_tokens=5, cached=True),
            ],
        }
    )


def _version(condition: str, user: str, version: int) -> MemoryVersion:
    items = [MemoryItem(id=f"i{v}", text=f"note {v}") for v in range(version)]
    return MemoryVersion(
        condition=condition, user_id=user, version=version, state=MemoryState(items=items)
    )


def test_sessions_memory_and_users_round_trip(tmp_path: Path) -> None:
    store = RunStore(tmp_path / "run")
    run = store.create_or_open(_config(tmp_path / "run"))
    store.put_users([UserRecord(user_id="u1", spec={"a": 1}), UserRecord(user_id="u0", spec={})])
    for index in range(3):
        store.commit_session(
            _record("none", "u0", index, "train" if index == 0 else "eval"),
            _version("none", "u0", index + 1),
        )
    store.commit_session(_record("notes", "u0", 0), _version("notes", "u0", 1))

    assert store.run().id == run.id
    assert [u.user_id for u in store.users()] == ["u1", "u0"]
    assert [r.index for r in store.sessions(condition="none")] == [0, 1, 2]
    assert [r.index for r in store.sessions(condition="none", split="eval")] == [1, 2]
    assert store.sessions(condition="none")[2].scores == {"hit": 2.0}
    assert store.done("none", "u0") == {0, 1, 2} and store.done("notes", "u1") == set()
    latest = store.latest_memory("none", "u0")
    assert latest is not None and latest.version == 3 and len(latest.state.items) == 3
    assert store.latest_memory("none", "nobody") is None
    assert [v.version for v in store.memory_versions("none", "u0")] == [1, 2, 3]
    usage = store.usage_by_role()
    assert usage["agent"].calls == 4 and usage["agent"].prompt_tokens == 40
    assert usage["user"].cached_calls == 4


def test_a_failed_commit_leaves_nothing_of_that_session(tmp_path: Path) -> None:
    store = RunStore(tmp_path)
    store.create_or_open(_config(tmp_path))
    store.commit_session(_record("none", "u0", 0), _version("none", "u0", 1))
    # Make the last statement of the transaction fail, after the session row was written.
    with sqlite3.connect(tmp_path / "run.sqlite") as conn:
        conn.execute(
            "CREATE TRIGGER refuse BEFORE INSERT ON memory_versions "
            "BEGIN SELECT RAISE(ABORT, 'disk trouble'); END"
        )
    with pytest.raises(sqlite3.DatabaseError, match="disk trouble"):
        store.commit_session(_record("none", "u0", 1), _version("none", "u0", 2))
    assert store.done("none", "u0") == {0}
    assert store.usage_by_role()["agent"].calls == 1
    assert [v.version for v in store.memory_versions()] == [1]


def test_each_commit_of_a_session_counts_one_attempt_and_a_failed_one_none(
    tmp_path: Path,
) -> None:
    store = RunStore(tmp_path)
    store.create_or_open(_config(tmp_path))
    store.commit_session(_record("none", "u0", 0), _version("none", "u0", 1))
    store.commit_session(_record("none", "u0", 1), _version("none", "u0", 2))
    store.commit_session(_record("none", "u0", 1), _version("none", "u0", 2))  # a retry
    failed = _record("none", "u0", 1).model_copy(update={"status": "error"})
    store.commit_session(failed, _version("none", "u0", 2))
    with sqlite3.connect(tmp_path / "run.sqlite") as conn:
        conn.execute(
            "CREATE TRIGGER refuse BEFORE INSERT ON memory_versions "
            "BEGIN SELECT RAISE(ABORT, 'disk trouble'); END"
        )
    with pytest.raises(sqlite3.DatabaseError, match="disk trouble"):
        store.commit_session(failed, _version("none", "u0", 2))
    assert store.attempts() == {("none", "u0", 0): 1, ("none", "u0", 1): 3}
    assert store.attempts("none", "u0", errors=True) == {("none", "u0", 1): 3}


def test_a_store_older_than_the_attempt_count_reads_and_takes_it_on(tmp_path: Path) -> None:
    with RunStore(tmp_path) as store:
        store.create_or_open(_config(tmp_path))
        store.commit_session(_record("none", "u0", 0), _version("none", "u0", 1))
    with sqlite3.connect(tmp_path / "run.sqlite") as conn:
        conn.execute("ALTER TABLE sessions DROP COLUMN attempts")  # as stores were written
    with RunStore.open_readonly(tmp_path) as old:
        assert not old.has_column("sessions", "attempts")
        assert old.attempts() == {("none", "u0", 0): 1}
        assert [r.index for r in old.sessions()] == [0]
    with RunStore(tmp_path) as store:  # opened to write: the column is added
        store.commit_session(_record("none", "u0", 0), _version("none", "u0", 1))
        assert store.attempts() == {("none", "u0", 0): 2}


def test_reopening_with_another_config_names_the_difference(tmp_path: Path) -> None:
    first = RunStore(tmp_path).create_or_open(_config(tmp_path, sessions=3))
    again = RunStore(tmp_path).create_or_open(_config(tmp_path, sessions=3, concurrency=4))
    assert again.id == first.id
    with pytest.raises(ConfigMismatchError, match=r"sessions: 3 -> 5"):
        RunStore(tmp_path).create_or_open(_config(tmp_path, sessions=5))
    with pytest.raises(ConfigMismatchError, match=r"options"):
        RunStore(tmp_path).create_or_open(_config(tmp_path, sessions=3, options={"a": "1"}))


def test_opening_a_missing_run_without_create_fails_and_writes_nothing(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        RunStore(tmp_path / "absent", create=False)
    assert not (tmp_path / "absent").exists()


def test_cache_round_trips_and_is_shared_between_connections(tmp_path: Path) -> None:
    path = tmp_path / "cache.sqlite"
    cache = SqliteCache(path)
    assert cache.get("k") is None
    cache.put("k", Completion(text="hello", usage=Usage(prompt_tokens=2, completion_tokens=1)))
    other = SqliteCache(path)
    hit = other.get("k")
    assert hit is not None and hit.text == "hello" and hit.usage.completion_tokens == 1
    assert len(other) == 1


def test_cache_writes_nothing_until_used(tmp_path: Path) -> None:
    SqliteCache(tmp_path / "sub" / "cache.sqlite")
    assert not (tmp_path / "sub").exists()


def test_cache_keeps_a_put_when_the_process_is_killed(tmp_path: Path) -> None:
    path = tmp_path / "cache.sqlite"
    script = (
        "import os, signal\n"
        "from rapport.llm import Completion\n"
        "from rapport.store import SqliteCache\n"
        f"SqliteCache({str(path)!r}).put('k', Completion(text='kept'))\n"
        "os.kill(os.getpid(), signal.SIGKILL)\n"
    )
    proc = subprocess.run([sys.executable, "-c", script], check=False)
    assert proc.returncode == -9
    hit = SqliteCache(path).get("k")
    assert hit is not None and hit.text == "kept"


@pytest.mark.parametrize(
    ("table", "body", "read"),
    [
        ("sessions", "{not json", lambda s: s.sessions()),
        ("sessions", '{"index": "x"}', lambda s: s.session("c", "u", 0)),
        ("memory_versions", "[]", lambda s: s.memory_versions()),
        ("run", '{"id": 3}', lambda s: s.run()),
    ],
)
def test_a_damaged_body_is_a_store_error_naming_the_file(
    tmp_path: Path, table: str, body: str, read: object
) -> None:
    with RunStore(tmp_path) as store:
        store.create_or_open(_config(tmp_path))
        store.commit_session(_record("c", "u", 0), _version("c", "u", 1))
    conn = sqlite3.connect(tmp_path / "run.sqlite")
    conn.execute(f"UPDATE {table} SET body = ?", (body,))
    conn.commit()
    conn.close()
    with RunStore.open_readonly(tmp_path) as store, pytest.raises(StoreError) as info:
        read(store)  # type: ignore[operator]
    assert "run.sqlite is damaged" in str(info.value) and "\n" not in str(info.value)


def test_an_empty_store_reads_as_no_run(tmp_path: Path) -> None:
    (tmp_path / "run.sqlite").write_bytes(b"")
    with pytest.raises(FileNotFoundError, match="no run found"):
        RunStore.open_readonly(tmp_path)


def test_a_cache_whose_home_is_a_file_is_refused_before_use(tmp_path: Path) -> None:
    (tmp_path / "home").write_text("x")
    with pytest.raises(StoreError, match="is not a directory"):
        SqliteCache(tmp_path / "home" / "cache.sqlite").check()
