"""Comparing runs: each run's setting beside its conditions' metrics, and paired differences
only between runs that share users and problems."""

from __future__ import annotations

import csv
import io
import json
import sqlite3
from collections import defaultdict
from pathlib import Path

import pytest

from rapport.eval import run
from rapport.log import ExperimentConfig
from rapport.report import (
    CompareError,
    build_report,
    compare_runs,
    render_comparison_csv,
    render_comparison_html,
    render_comparison_text,
)
from rapport.store import RunStore


def scripted_run(run_dir: Path, *, seed: int, agent: str = "scripted/auto") -> Path:
    """The scripted benchmark, none vs oracle, 3 users x 3 sessions."""
    config = ExperimentConfig(
        benchmark="scripted",
        memory=["none", "oracle"],
        users=3,
        sessions=3,
        seed=seed,
        run_dir=run_dir,
        models={"all": "scripted/auto", "agent": agent},
        cache=False,
    )
    run(config, progress=False)
    return run_dir


@pytest.fixture(scope="module")
def three_runs(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    """a and b share users and problems (same seed, another agent model); c does not."""
    root = tmp_path_factory.mktemp("runs")
    return [
        scripted_run(root / "a", seed=1),
        scripted_run(root / "b", seed=1, agent="scripted/echo"),
        scripted_run(root / "c", seed=2),
    ]


def _by_hand(base: Path, other: Path, condition: str, metric: str) -> float:
    """Mean over users of each user's mean (other - base) over paired sessions."""
    with RunStore.open_readonly(base) as a, RunStore.open_readonly(other) as b:
        left = {(r.user_id, r.index): r for r in a.score_records() if r.condition == condition}
        right = [r for r in b.score_records() if r.condition == condition]
    per_user: dict[str, list[float]] = defaultdict(list)
    for r in right:
        mine = left[(r.user_id, r.index)]
        assert mine.spec_id == r.spec_id
        per_user[r.user_id].append(r.scores[metric] - mine.scores[metric])
    means = [sum(v) / len(v) for v in per_user.values()]
    return sum(means) / len(means)


def test_every_run_and_condition_gets_a_row_with_its_report_numbers(three_runs: list[Path]):
    comparison = compare_runs(three_runs)
    assert [r.label for r in comparison.runs] == ["a", "b", "c"]
    assert [(r.run, r.condition) for r in comparison.rows] == [
        (run, c) for run in "abc" for c in ("none", "oracle")
    ]
    report = build_report(three_runs[1], light=True)
    row = next(r for r in comparison.rows if (r.run, r.condition) == ("b", "oracle"))
    assert row.estimates == report.conditions["oracle"]
    assert comparison.metrics == ["hit", "words"]
    assert comparison.lower_is_better == ["words"]


def test_each_run_names_its_models_per_role_seed_and_options(three_runs: list[Path]):
    runs = {r.label: r for r in compare_runs(three_runs).runs}
    assert runs["a"].models["agent"] == "scripted/auto"
    assert runs["b"].models["agent"] == "scripted/echo"
    assert runs["b"].models["user"] == "scripted/auto"
    assert "all" not in runs["b"].models  # every role that called is listed by name
    assert (runs["a"].seed, runs["c"].seed) == (1, 2)
    # Stored as the benchmark reads them: typed, defaults included.
    assert runs["a"].options == {"delay": 0.0, "train_sessions": 0}
    assert runs["a"].status == "complete"
    assert runs["a"].sessions == 18
    assert runs["a"].size_bytes > 0


def test_paired_differences_only_between_runs_sharing_users(three_runs: list[Path]):
    comparison = compare_runs(three_runs)
    pairs = {(d.run, d.baseline_run, d.condition) for d in comparison.differences}
    assert pairs == {("b", "a", "none"), ("b", "a", "oracle")}
    diff = next(d for d in comparison.differences if d.condition == "none")
    assert diff.users == 3
    words = diff.metrics["words"]
    assert words.mean == pytest.approx(_by_hand(three_runs[0], three_runs[1], "none", "words"))
    assert words.ci_low <= words.mean <= words.ci_high
    assert words.sessions == 9


def test_runs_of_other_seeds_are_not_paired(three_runs: list[Path]):
    # Seeds 1 and 2 draw other users and topics under the same ids (u0, u0-s0 ...).
    a, c = three_runs[0], three_runs[2]
    with RunStore.open_readonly(a) as one, RunStore.open_readonly(c) as two:
        assert [u.user_id for u in one.users()] == [u.user_id for u in two.users()]
        assert [r.spec_id for r in one.score_records()] == [r.spec_id for r in two.score_records()]
    assert compare_runs([a, c]).differences == []


def test_users_with_the_same_id_but_another_profile_are_not_paired(tmp_path: Path):
    a = scripted_run(tmp_path / "a", seed=1)
    b = scripted_run(tmp_path / "b", seed=1)
    with RunStore.open_readonly(b) as store:
        user = store.users()[0]
    other = user.model_copy(update={"spec": {**user.spec, "persona": "someone else"}})
    with sqlite3.connect(b / "run.sqlite") as db:  # another user under the same id
        db.execute(
            "UPDATE users SET body = ? WHERE user_id = ?", (other.model_dump_json(), user.user_id)
        )
    diffs = compare_runs([a, b]).differences
    assert {d.users for d in diffs} == {2}


def test_renderings_carry_the_same_numbers(three_runs: list[Path]):
    comparison = compare_runs(three_runs)
    text = render_comparison_text(comparison)
    assert "b - a" in text and "scripted/echo" in text
    rows = list(csv.DictReader(io.StringIO(render_comparison_csv(comparison))))
    estimates = [r for r in rows if not r["baseline_run"]]
    assert len(estimates) == 3 * 2 * 2  # runs x conditions x metrics
    diff = next(r for r in rows if r["baseline_run"] == "a" and r["condition"] == "none")
    expected = next(d for d in comparison.differences if d.condition == "none")
    assert float(diff["mean"]) == pytest.approx(expected.metrics[diff["metric"]].mean)
    assert json.loads(diff["models"])["agent"] == "scripted/echo"
    document = json.loads(json.dumps(comparison.to_json()))
    assert len(document["differences"]) == 2
    html = render_comparison_html(comparison)
    assert "<svg" in html and "b - a" in html


def test_runs_of_different_benchmarks_are_refused(three_runs: list[Path], tmp_path: Path):
    other = tmp_path / "collab"
    run(
        ExperimentConfig(
            benchmark="collab",
            users=1,
            sessions=1,
            max_turns=1,
            run_dir=other,
            models={"all": "scripted/auto"},
            options={"user": "rules"},
            cache=False,
        ),
        progress=False,
    )
    with pytest.raises(CompareError, match="different benchmarks"):
        compare_runs([three_runs[0], other])


def test_the_same_run_twice_and_no_run_are_refused(three_runs: list[Path], tmp_path: Path):
    with pytest.raises(CompareError, match="given twice"):
        compare_runs([three_runs[0], three_runs[0].parent / "." / "a"])
    with pytest.raises(FileNotFoundError):
        compare_runs([three_runs[0], tmp_path])
