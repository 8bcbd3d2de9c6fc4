"""A run committed part-done under ``results/`` is finished, on another machine, by the same
command that started it, and ends as an uninterrupted run of that command would."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from rapport.cli import main
from rapport.report import build_report, render_text
from rapport.store import RunStore

RESULTS = Path(__file__).resolve().parent.parent / "results"
PART_DONE = RESULTS / "resume-example"
COMMAND = [
    "run",
    "scripted",
    "--memory",
    "none,reflection",
    "--users",
    "2",
    "--sessions",
    "6",
    "--max-turns",
    "2",
    "--delay",
    "0.1",
    "--model",
    "all=scripted/auto",
    "--seed",
    "0",
    "--no-progress",
]
"""The command results/README.md gives for ``resume-example`` (without ``--run-dir``)."""
TOTAL = 2 * 2 * 6


def _scores(run_dir: Path) -> dict[tuple[str, str, int], dict[str, float]]:
    with RunStore.open_readonly(run_dir) as store:
        return {(r.condition, r.user_id, r.index): r.scores for r in store.sessions()}


def test_the_committed_run_is_part_done() -> None:
    done = _scores(PART_DONE)
    assert 0 < len(done) < TOTAL
    assert "resume-example" in (RESULTS / "README.md").read_text(encoding="utf-8")
    assert " ".join(COMMAND[:-1]) in (RESULTS / "README.md").read_text(encoding="utf-8")


def test_its_report_says_it_is_part_done() -> None:
    text = render_text(build_report(PART_DONE))
    done = len(_scores(PART_DONE))
    assert f"Part-done: {done} of the {TOTAL} planned sessions are stored" in text


def test_the_same_command_finishes_a_copy_of_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run_dir = tmp_path / "resume-example"
    shutil.copytree(PART_DONE, run_dir)
    before = _scores(run_dir)
    assert main([*COMMAND, "--run-dir", str(run_dir)]) == 0
    assert f"({len(before)} already done)" in capsys.readouterr().err
    after = _scores(run_dir)
    assert len(after) == TOTAL
    assert all(after[key] == scores for key, scores in before.items())
    assert build_report(run_dir).part_done == ""
    fresh = tmp_path / "fresh"
    assert main([*COMMAND, "--run-dir", str(fresh)]) == 0
    assert _scores(fresh) == after
