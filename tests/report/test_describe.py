"""The report describes its run; curves, paired differences; json vs --html; read-only."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from rapport.cli import main
from rapport.eval import ExperimentConfig, run
from rapport.report import build_report, render_html
from rapport.store import RunStore

pytestmark = pytest.mark.usefixtures("registered")


def _run(tmp_path: Path, memory: list[str], name: str = "run") -> Path:
    config = ExperimentConfig.model_validate(
        {
            "benchmark": "scripted",
            "memory": memory,
            "users": 3,
            "sessions": 3,
            "max_turns": 2,
            "seed": 5,
            "run_dir": tmp_path / name,
            "models": {"all": "fake/aware"},
            "memory_options": {"notes": {}},
        }
    )
    run(config, progress=False)
    return tmp_path / name


def test_json_carries_the_config_models_packages_and_revision(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run_dir = _run(tmp_path, ["none", "notes"])
    assert main(["report", str(run_dir), "--format", "json"]) == 0
    d = json.loads(capsys.readouterr().out)["description"]
    assert d["seed"] == 5 and d["config"]["memory"] == ["none", "notes"]
    assert d["retrieval"] == {"none": "none", "notes": "none"}
    roles = {m["role"]: m for m in d["models"]}
    assert (
        roles["agent"]["spec"] == "fake/aware" and roles["agent"]["calls"] == 18 * 2
    )  # two turns a session
    assert {"agent", "user"} <= set(roles)
    assert "all" not in roles  # the default of every role, not a role that made calls
    ours = d["packages"].get("rapport-toolkit") or d["packages"].get("rapport")
    assert d["packages"]["pydantic"] and ours == "0.1.0"
    assert d["invocations"] == 1 and d["python"]
    head = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True)
    if head.returncode == 0:  # the tests run from a git checkout
        assert d["git_revision"] == head.stdout.strip()


def test_curves_are_absolute_and_the_paired_difference_has_a_ci(tmp_path: Path) -> None:
    report = build_report(_run(tmp_path, ["none", "notes"]))
    hit = report.curves["notes"]["hit"]
    assert [(p.index, p.mean, p.users) for p in hit] == [(0, 0.0, 3), (1, 1.0, 3), (2, 1.0, 3)]
    assert [p.mean for p in report.curves["none"]["hit"]] == [0.0, 0.0, 0.0]
    paired = report.paired["notes"]["hit"]
    # notes finds the word from the second session on: 2 of 3 sessions per user
    assert paired.mean == pytest.approx(2 / 3) and paired.users == 3 and paired.sessions == 9
    assert paired.ci_low <= paired.mean <= paired.ci_high
    assert "none" not in report.paired


def test_one_condition_still_gets_a_plot(tmp_path: Path) -> None:
    report = build_report(_run(tmp_path, ["notes"]))
    assert report.deltas == {} and report.paired == {}
    page = render_html(report)
    assert page.count('<figure class="chart">') == 2  # hit and words by session


def test_json_does_not_rewrite_the_html_but_the_html_flag_does(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run_dir = _run(tmp_path, ["none", "notes"])
    html = run_dir / "report.html"
    assert main(["report", str(run_dir), "--format", "json"]) == 0
    assert not html.exists()
    json.loads(capsys.readouterr().out)  # stdout stays one JSON document
    assert main(["report", str(run_dir), "--format", "json", "--html"]) == 0
    captured = capsys.readouterr()
    json.loads(captured.out)
    assert html.is_file() and "report: " in captured.err


def test_html_may_not_overwrite_the_store(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run_dir = _run(tmp_path, ["notes"])
    before = (run_dir / "run.sqlite").read_bytes()
    assert main(["report", str(run_dir), "--html", str(run_dir / "run.sqlite")]) == 2
    assert len(capsys.readouterr().err.strip().splitlines()) == 1
    assert (run_dir / "run.sqlite").read_bytes() == before


@pytest.fixture
def frozen(tmp_path: Path) -> Iterator[Path]:
    """A finished run whose dir and store cannot be changed, as on a read-only disk."""
    run_dir = _run(tmp_path, ["none", "notes"])
    paths = [run_dir / "run.sqlite", run_dir]
    done = subprocess.run(["chattr", "+i", *map(str, paths)], capture_output=True, check=False)
    if done.returncode != 0:
        pytest.skip(f"cannot make a directory immutable here: {done.stderr.decode().strip()}")
    try:
        yield run_dir
    finally:
        subprocess.run(["chattr", "-i", *map(str, paths)], check=False)


def test_a_run_on_a_read_only_disk_is_reported(
    frozen: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["report", str(frozen)]) == 0
    out = capsys.readouterr().out
    assert "notes" in out and "report.html not written" in out
    assert [p.name for p in frozen.iterdir()] == ["run.sqlite"]
    with RunStore.open_readonly(frozen) as store:
        assert store.count_rows() == 18


def test_the_reader_changes_nothing(tmp_path: Path) -> None:
    run_dir = _run(tmp_path, ["notes"])
    before = (run_dir / "run.sqlite").read_bytes()
    report = build_report(run_dir)
    with RunStore.open_readonly(run_dir) as store, pytest.raises(Exception, match="readonly"):
        store.put_users([])
    assert report.sessions == 9
    assert (run_dir / "run.sqlite").read_bytes() == before
    # SQLite's WAL index may appear beside a writable store; the log stays empty
    assert {p.name for p in run_dir.iterdir()} <= {"run.sqlite", "run.sqlite-wal", "run.sqlite-shm"}
    wal = run_dir / "run.sqlite-wal"
    assert not wal.exists() or wal.stat().st_size == 0
