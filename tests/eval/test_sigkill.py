"""`rapport run` killed with SIGKILL mid-way, then run again, equals an uninterrupted run."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
from runner_fakes import HERE

pytestmark = pytest.mark.race

ENTRY = f"""
import sys
sys.path.insert(0, {str(HERE)!r})
import runner_fakes
runner_fakes.install()
from rapport.cli import main
sys.exit(main(sys.argv[1:]))
"""

ARGS = [
    "run",
    "scripted",
    "--memory",
    "none,notes",
    "--users",
    "2",
    "--sessions",
    "5",
    "--max-turns",
    "2",
    "--model",
    "all=fake/aware",
    "--delay",
    "0.05",
    "--no-progress",
]


def _cli(entry: Path, *args: str, home: Path) -> subprocess.Popen[str]:
    env = {**os.environ, "RAPPORT_HOME": str(home)}
    return subprocess.Popen(
        [sys.executable, str(entry), *args],
        env=env,
        text=True,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        # a suite started in the background (`... &` in a script) inherits SIGINT ignored,
        # and a Python started that way never turns Ctrl-C into KeyboardInterrupt
        preexec_fn=_default_sigint,
    )


def _default_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _stored(run_dir: Path) -> int:
    try:
        with sqlite3.connect(run_dir / "run.sqlite") as conn:
            return int(conn.execute("SELECT COUNT(*) FROM sessions").fetchone()[0])
    except sqlite3.Error:
        return 0


def _calls_per_session(run_dir: Path) -> list[tuple[str, str, int, str, int]]:
    with sqlite3.connect(run_dir / "run.sqlite") as conn:
        return conn.execute(
            "SELECT condition, user_id, idx, role, COUNT(*) FROM model_calls "
            "GROUP BY condition, user_id, idx, role ORDER BY 1, 2, 3, 4"
        ).fetchall()


def _report(entry: Path, run_dir: Path, home: Path) -> dict[str, object]:
    proc = _cli(entry, "report", str(run_dir), "--format", "json", home=home)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err
    data: dict[str, object] = json.loads(out)
    return data


def test_sigkill_then_rerun_gives_each_session_once_and_the_same_metrics(tmp_path: Path) -> None:
    entry = tmp_path / "entry.py"
    entry.write_text(ENTRY)
    killed, clean = tmp_path / "killed", tmp_path / "clean"

    proc = _cli(entry, *ARGS, "--run-dir", str(killed), home=tmp_path / "home1")
    deadline = time.monotonic() + 600  # a bound on a hung run only
    while _stored(killed) < 4 and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.02)
    proc.send_signal(signal.SIGKILL)
    proc.communicate(timeout=60)
    assert proc.returncode == -signal.SIGKILL
    assert 4 <= _stored(killed) < 20

    resumed = _cli(entry, *ARGS, "--run-dir", str(killed), home=tmp_path / "home1")
    _out, err = resumed.communicate(timeout=300)
    assert resumed.returncode == 0, err
    full = _cli(entry, *ARGS, "--run-dir", str(clean), home=tmp_path / "home2")
    _out, err = full.communicate(timeout=300)
    assert full.returncode == 0, err

    assert _stored(killed) == _stored(clean) == 20
    assert _calls_per_session(killed) == _calls_per_session(clean)
    a, b = _report(entry, killed, tmp_path / "home1"), _report(entry, clean, tmp_path / "home2")
    assert a["conditions"] == b["conditions"] and a["deltas"] == b["deltas"]
    assert a["sessions"] == b["sessions"] == 20


def test_ctrl_c_stops_with_130_keeping_finished_sessions(tmp_path: Path) -> None:
    entry = tmp_path / "entry.py"
    entry.write_text(ENTRY)
    run_dir = tmp_path / "run"
    proc = _cli(entry, *ARGS, "--run-dir", str(run_dir), home=tmp_path / "home")
    deadline = time.monotonic() + 600  # a bound on a hung run only
    while _stored(run_dir) < 2 and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.02)
    proc.send_signal(signal.SIGINT)
    _out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130
    assert "resume" in err and len(err.strip().splitlines()) == 1
    assert 2 <= _stored(run_dir) < 20
