"""`rapport run gym --gym-data CHECKOUT`: UserRL's tasks end to end on scripted models."""

from __future__ import annotations

from pathlib import Path

import pytest

from rapport.cli import main
from rapport.envs.gyms import GymOutcome
from rapport.store import RunStore

PLAYED = "function,telepathy,turtle,intention,persuade"


def _argv(checkout: Path, run_dir: Path, *more: str) -> list[str]:
    return [
        "run", "gym", "--gym-data", str(checkout), "--model", "all=scripted/auto",
        "--users", "1", "--train-episodes", "2", "--eval-episodes", "1", "--horizon", "4",
        "--run-dir", str(run_dir), "--no-progress", *more,
    ]  # fmt: skip


def test_a_run_plays_each_gyms_userrl_tasks(
    userrl_checkout: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = tmp_path / "run.yaml"
    config.write_text("memory_options: {prime: {embedder: hashing}}\n", encoding="utf-8")
    run_dir = tmp_path / "run"
    argv = _argv(userrl_checkout, run_dir, "--env", PLAYED, "--memory", "none,prime")
    assert main([*argv, "--config", str(config)]) == 0
    out = capsys.readouterr().out
    assert "Gym tasks: where the episodes came from" in out and "UserRL checkout" in out
    with RunStore.open_readonly(run_dir) as store:
        records = store.sessions()
    outcomes = [r.outcome for r in records if isinstance(r.outcome, GymOutcome)]
    assert len(outcomes) == len(records) == 5 * 3 * 2
    played = {(o.env, o.task_id) for o in outcomes}
    assert ("function", "fn-3") in played and ("telepathy", "Violin") in played
    assert ("intention", "in-1") in played and ("persuade", "pe-2") in played
    assert all(o.task_id is not None and o.pool for o in outcomes)


@pytest.mark.parametrize(
    ("where", "env", "words"),
    [
        ("nowhere", "function", "no such file or directory"),
        ("checkout", "search", "gym 'search' cannot play UserRL's tasks"),
    ],
)
def test_a_bad_gym_data_is_one_line_and_exit_2(
    userrl_checkout: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    where: str,
    env: str,
    words: str,
) -> None:
    checkout = userrl_checkout if where == "checkout" else tmp_path / "nowhere"
    run_dir = tmp_path / "run"
    assert main([*_argv(checkout, run_dir), "--env", env]) == 2
    err = capsys.readouterr().err.strip()
    assert words in err and len(err.splitlines()) == 1
    assert not run_dir.exists(), "nothing is written"
