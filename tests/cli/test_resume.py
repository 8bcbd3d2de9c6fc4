"""``rapport resume RUN_DIR``: a run stopped with Ctrl-C is finished from its run dir alone,
with the config it stored, and ends as an uninterrupted run of the same command."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from rapport.cli import main
from rapport.cli._resume import resumed_config
from rapport.eval import ExperimentConfig
from rapport.store import RunStore, StoreError

COMMAND = [
    *("run", "scripted", "--memory", "none,reflection", "--users", "2", "--sessions", "6"),
    *("--max-turns", "2", "--delay", "0.05", "--model", "all=scripted/auto", "--seed", "3"),
    "--no-progress",
]
TOTAL = 2 * 2 * 6


def _sessions(run_dir: Path) -> dict[tuple[str, str, int], Any]:
    """Each session's status, scores, transcript and memory version."""
    with RunStore.open_readonly(run_dir) as store:
        return {
            (r.condition, r.user_id, r.index): (
                r.status,
                r.scores,
                [(t.speaker, t.text) for t in r.turns],
                r.memory_version,
            )
            for r in store.sessions()
        }


def _stored(run_dir: Path) -> int:
    """Sessions committed so far (0 while the store is not made yet)."""
    try:
        with RunStore.open_readonly(run_dir) as store:
            return store.count_rows() if store.has_table("sessions") else 0
    except (FileNotFoundError, StoreError):  # the run is still making its store
        return 0


def _interrupted_run(run_dir: Path, home: Path) -> tuple[int, str]:
    """`COMMAND` in a subprocess, sent SIGINT once it has committed two sessions."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path), "RAPPORT_HOME": str(home)}
    proc = subprocess.Popen(
        [sys.executable, "-m", "rapport", *COMMAND, "--run-dir", str(run_dir)],
        env=env,
        text=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    deadline = time.monotonic() + 120
    while _stored(run_dir) < 2:  # wait for the condition: two sessions committed
        assert proc.poll() is None and time.monotonic() < deadline, "no session committed"
        time.sleep(0.01)
    proc.send_signal(signal.SIGINT)
    _out, err = proc.communicate(timeout=120)
    return proc.returncode, err


def test_an_interrupted_run_resumed_equals_an_uninterrupted_one(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    stopped = tmp_path / "stopped"
    code, err = _interrupted_run(stopped, tmp_path / "home")
    assert code == 130, err
    assert f"resume with: rapport resume {stopped}" in err
    part = _sessions(stopped)
    assert 2 <= len(part) < TOTAL
    assert main(["resume", str(stopped), "--concurrency", "2", "--no-progress"]) == 0
    assert f"({len(part)} already done)" in capsys.readouterr().err
    resumed = _sessions(stopped)
    assert len(resumed) == TOTAL
    assert all(resumed[key] == value for key, value in part.items())
    fresh = tmp_path / "fresh"
    assert main([*COMMAND, "--run-dir", str(fresh)]) == 0
    assert _sessions(fresh) == resumed


def _config(run_dir: Path) -> ExperimentConfig:
    return ExperimentConfig.model_validate(
        {
            "benchmark": "scripted",
            "run_dir": run_dir,
            "memory": ["none"],
            "max_turns": 2,
            "models": {"all": "openai/auto", "judge": "scripted/auto"},
            "model_settings": {"all": {"base_url": "http://127.0.0.1:9/v1", "timeout": 30}},
            "concurrency": 1,
        }
    )


def test_resume_moves_a_server_and_keeps_everything_else(tmp_path: Path) -> None:
    stored = _config(tmp_path / "old")
    config = resumed_config(
        stored,
        tmp_path / "new",
        models=["all=openai/auto,base_url=http://127.0.0.1:10/v1"],
        concurrency=4,
    )
    assert config.model_settings["all"].base_url == "http://127.0.0.1:10/v1"
    assert config.model_settings["all"].timeout == 30
    assert (config.run_dir, config.concurrency) == (tmp_path / "new", 4)
    assert config.model_dump(exclude={"run_dir", "concurrency", "model_settings"}) == (
        stored.model_dump(exclude={"run_dir", "concurrency", "model_settings"})
    )


@pytest.mark.parametrize(
    ("models", "needle"),
    [
        (["all=openai/other,base_url=http://127.0.0.1:10/v1"], "keeps the run's models"),
        (["judge=scripted/echo"], "judge is scripted/auto, not scripted/echo"),
        (["all=openai/auto,temperature=0.7"], "keeps the run's sampling"),
    ],
)
def test_resume_refuses_what_changes_results(
    tmp_path: Path, models: list[str], needle: str
) -> None:
    from rapport.cli import UsageError

    with pytest.raises(UsageError, match=needle):
        resumed_config(_config(tmp_path), tmp_path, models=models)


def test_resume_of_a_dir_without_a_run_is_one_line_and_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "empty").mkdir()
    for target in (tmp_path / "empty", tmp_path / "missing"):
        assert main(["resume", str(target)]) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and "no run found" in err[0], err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["empty"]
