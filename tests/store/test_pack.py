"""`rapport pack`: a run's store as one compact file that readers open without writing."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from rapport.cli import main
from rapport.store import RUN_FILE, RunDirLock, RunStore, pack_run

RUN = ["run", "scripted", "--memory", "none,reflection", "--users", "2", "--sessions", "2"]
RUN += ["--model", "all=scripted/auto", "--no-progress"]


def _journal_mode(path: Path) -> str:
    conn = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)
    try:
        return str(conn.execute("PRAGMA journal_mode").fetchone()[0])
    finally:
        conn.close()


@pytest.fixture
def run_dir(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> Path:
    run_dir = tmp_path / "run"
    assert main([*RUN, "--run-dir", str(run_dir)]) == 0
    (run_dir / "report.html").unlink()
    capsys.readouterr()
    return run_dir


def test_a_packed_store_is_read_without_a_file_written_beside_it(
    run_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with RunStore.open_readonly(run_dir) as store:
        before = {(r.condition, r.user_id, r.index): r.scores for r in store.sessions()}
    assert _journal_mode(run_dir / RUN_FILE) == "wal"
    assert main(["pack", str(run_dir)]) == 0
    assert "packed" in capsys.readouterr().out
    assert _journal_mode(run_dir / RUN_FILE) == "delete"
    assert sorted(p.name for p in run_dir.iterdir()) == [RUN_FILE]
    assert main(["report", str(run_dir), "--format", "json"]) == 0
    with RunStore.open_readonly(run_dir) as store:
        after = {(r.condition, r.user_id, r.index): r.scores for r in store.sessions()}
    assert after == before and len(after) == 2 * 2 * 2
    assert sorted(p.name for p in run_dir.iterdir()) == [RUN_FILE]


def test_a_packed_run_resumes_as_usual(run_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pack_run(run_dir)
    assert main([*RUN, "--run-dir", str(run_dir)]) == 0
    assert "(8 already done)" in capsys.readouterr().err


def test_a_busy_or_missing_run_dir_is_refused_in_one_line(
    run_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lock = RunDirLock(run_dir)
    lock.acquire()
    try:
        assert main(["pack", str(run_dir)]) == 2
    finally:
        lock.release()
    assert "in use by another rapport process" in capsys.readouterr().err
    assert _journal_mode(run_dir / RUN_FILE) == "wal"
    (tmp_path / "empty").mkdir()
    assert main(["pack", str(tmp_path / "empty")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "no run found" in err[0]
    assert not (tmp_path / "empty" / RUN_FILE).exists()
