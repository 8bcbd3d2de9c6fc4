"""`rapport demo`: MPT recall under none and rag, and the plain-words account it prints."""

from __future__ import annotations

from pathlib import Path

import pytest

from rapport.cli import main
from rapport.cli._demo_text import session_curve, what_it_shows
from rapport.envs.mpt import MPTEvalOutcome
from rapport.eval import Estimate
from rapport.report import CurvePoint, PairedDifference, Report
from rapport.store import RunStore


def _report(low: float, high: float) -> Report:
    curve = {
        "none": {"f1": [CurvePoint(index=4, mean=0.25, ci_low=0.0, ci_high=0.5, users=4)]},
        "rag": {"f1": [CurvePoint(index=4, mean=0.75, ci_low=0.5, ci_high=1.0, users=4)]},
    }
    diff = PairedDifference(mean=(low + high) / 2, ci_low=low, ci_high=high, users=4, sessions=8)
    estimate = Estimate(mean=0.5, ci_low=0.2, ci_high=0.8)
    return Report(
        benchmark="mpt",
        run_id="r",
        run_dir="runs/demo",
        conditions={"none": {"f1": estimate}, "rag": {"f1": estimate}},
        metrics=["f1"],
        baseline="none",
        curves=curve,
        paired={"rag": {"f1": diff}},
        users=4,
    )


def test_a_ci_above_zero_is_said_to_beat_none_and_one_across_zero_is_not() -> None:
    beats = what_it_shows(_report(0.1, 0.6), "why")
    assert "rag beats none: the CI excludes zero." in beats
    assert "rapport view runs/demo" in beats and "runs/demo/report.html" in beats
    unclear = what_it_shows(_report(-0.1, 0.6), "why")
    assert "beats" not in unclear and "the CI includes zero" in unclear


def test_the_curve_draws_one_bar_per_condition_and_session() -> None:
    text = session_curve(_report(0.1, 0.6).curves, "f1")
    rows = text.splitlines()[1:]
    assert [r.split("|")[0].split()[-2:] for r in rows] == [["none", "0.25"], ["rag", "0.75"]]
    assert rows[0].count("#") < rows[1].count("#")
    assert rows[0].split()[:2] == ["session", "5"]


def test_the_curve_names_what_each_session_asked_when_told() -> None:
    text = session_curve(_report(0.1, 0.6).curves, "f1", {4: "context-guided"})
    assert text.splitlines()[1].split()[:3] == ["session", "5", "(context-guided)"]


def test_demo_runs_mpt_end_to_end_and_says_what_it_shows(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run_dir = tmp_path / "demo"
    argv = ["demo", "--model", "all=scripted/auto", "--run-dir", str(run_dir), "--no-progress"]
    assert main([*argv, "--users", "2", "--sessions", "2"]) == 0
    out = capsys.readouterr().out
    assert "What was measured: 2 generated users (seed 0) each made 2 " in out
    assert "f1 per evaluation session" in out and "What it shows" in out
    assert "session 3 (context-guided)" in out and "session 4 (context-free)" in out
    assert f"rapport view {run_dir}" in out
    with RunStore.open_readonly(run_dir) as store:
        records = store.sessions()
    evals = [r for r in records if r.split == "eval"]
    assert {r.condition for r in records} == {"none", "rag"}
    outcomes = [r.outcome for r in evals]
    assert outcomes and all(isinstance(o, MPTEvalOutcome) for o in outcomes)
    assert {o.challenge for o in outcomes if isinstance(o, MPTEvalOutcome)} == {"recall"}
    assert len([r for r in records if r.split == "train"]) == 2 * 2 * 2


def test_max_turns_is_refused_for_the_mpt_demo(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["demo", "--model", "all=scripted/auto", "--run-dir", str(tmp_path / "d")]
    assert main([*argv, "--max-turns", "2"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--max-turns applies to `rapport demo collab`" in err[0]
    assert not (tmp_path / "d").exists()
