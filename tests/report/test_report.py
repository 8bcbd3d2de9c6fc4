"""Reports from the store: the JSON shape, the table, CSV, HTML with plots, benchmark hooks."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rapport.cli import main
from rapport.eval import ExperimentConfig, run
from rapport.report import build_report, render_text

pytestmark = pytest.mark.usefixtures("registered")


@pytest.fixture
def run_dir(tmp_path: Path) -> Path:
    config = ExperimentConfig.model_validate(
        {
            "benchmark": "scripted",
            "memory": ["notes", "none", "forgetful"],
            "users": 3,
            "sessions": 3,
            "max_turns": 2,
            "run_dir": tmp_path / "run",
            "models": {"all": "fake/aware"},
        }
    )
    run(config, progress=False)
    return tmp_path / "run"


def test_json_has_the_documented_shape(run_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["report", str(run_dir), "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["benchmark"] == "scripted"
    assert list(data["conditions"]) == ["notes", "none", "forgetful"]  # the run's order
    for metrics in data["conditions"].values():
        assert list(metrics) == ["hit", "words"]
        for est in metrics.values():
            assert set(est) == {"mean", "ci_low", "ci_high", "sessions", "errors"}
    assert data["sessions"] == 27 and data["errors"] == 9  # forgetful fails to learn 9 times
    assert set(data["usage"]) == {"agent", "user"}
    assert set(data["usage"]["agent"]) == {"prompt", "completion"}
    assert data["usage"]["agent"]["prompt"] > 0
    assert data["model_calls"] + data["cached_calls"] == 27 * 4
    assert data["model_calls"] < 27 * 4  # identical prompts across conditions hit the cache


def test_deltas_show_memory_helping_from_the_second_session(run_dir: Path) -> None:
    report = build_report(run_dir)
    assert report.baseline == "none"
    hit = report.deltas["notes"]["hit"]
    assert [(p.index, p.mean) for p in hit] == [(0, 0.0), (1, 1.0), (2, 1.0)]
    assert report.conditions["none"]["hit"].mean == 0.0
    assert report.lower_is_better == ["words"]


def test_table_prints_means_with_intervals(
    run_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["report", str(run_dir)]) == 0
    out = capsys.readouterr().out
    assert "notes" in out and "0.667 [0.667, 0.667]" in out
    assert f"report: {run_dir / 'report.html'}" in out


def test_csv_has_a_row_per_condition_and_metric(
    run_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["report", str(run_dir), "--format", "csv"]) == 0
    lines = capsys.readouterr().out.splitlines()
    header = "condition,metric,mean,ci_low,ci_high,sessions,errors"
    assert lines[0] == header and len(lines) == 1 + 3 * 2


def test_html_is_self_contained_with_plots_and_errors(run_dir: Path, tmp_path: Path) -> None:
    target = tmp_path / "out" / "r.html"
    assert main(["report", str(run_dir), "--format", "json", "--html", str(target)]) == 0
    page = target.read_text()
    # per metric: the absolute curves and the difference to none
    assert page.count('<figure class="chart">') == 4
    assert "learning failed on purpose" in page and "memory.learn" in page
    assert "<script" not in page and "http" not in page.replace("http-equiv", "")


def test_report_of_a_missing_run_is_a_usage_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["report", str(tmp_path / "nothing")]) == 2
    assert len(capsys.readouterr().err.strip().splitlines()) == 1
    assert not (tmp_path / "nothing").exists()


def test_benchmark_tables_and_metric_order_come_from_its_hooks(
    run_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from rapport.envs import _registry

    monkeypatch.setitem(_registry.BENCHMARKS, "scripted", "runner_fakes:TabledBenchmark")
    report = build_report(run_dir)
    assert report.metrics == ["words", "hit"]
    assert report.tables[0].rows == [[27]]
    assert "Sessions" in render_text(report)


def test_report_works_when_the_benchmark_is_gone(
    run_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from rapport.envs import _registry

    monkeypatch.delitem(_registry.BENCHMARKS, "scripted")
    report = build_report(run_dir)
    assert report.metrics == ["hit", "words"] and report.lower_is_better == []


def test_markdown_prints_every_table_under_its_title(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run_dir = tmp_path / "run"
    argv = ["run", "scripted", "--memory", "none,reflection", "--users", "2", "--sessions", "2"]
    assert (
        main([*argv, "--model", "all=scripted/auto", "--no-progress", "--run-dir", str(run_dir)])
        == 0
    )
    (run_dir / "report.html").unlink()
    capsys.readouterr()
    assert main(["report", str(run_dir), "--format", "markdown"]) == 0
    out = capsys.readouterr().out
    titles = [line[4:] for line in out.splitlines() if line.startswith("### ")]
    assert titles[:2] == [
        "scripted: mean over users [95% CI]",
        "scripted: condition - none [95% CI]",
    ]
    summary = out.split("### ")[1].splitlines()
    assert summary[2].startswith("| condition | hit |") and summary[3].startswith("|---|---|")
    assert {row.split(" | ")[0] for row in summary[4:6]} == {"| none", "| reflection"}
    assert not (run_dir / "report.html").exists()
