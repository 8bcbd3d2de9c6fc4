"""A benchmark written outside rapport (tests/fixtures/riddles) plugs in by an entry point:
it runs end to end from the command line, is listed, and its own metrics, report table and
event types show in `rapport report` and `rapport view`, with no file of rapport edited."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from starlette.testclient import TestClient

from rapport.cli import main
from rapport.envs import BENCHMARKS
from rapport.llm import _registry
from rapport.store import RunStore
from rapport.view import create_app

FIXTURES = Path(__file__).parent / "fixtures"


@pytest.fixture
def riddles(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The fixture package importable and announced by an entry point, as an installed
    plug-in would be."""
    site = tmp_path / "site"
    site.mkdir()
    dist = site / "riddles_plugin-0.1.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: riddles-plugin\nVersion: 0.1\n")
    (dist / "entry_points.txt").write_text(
        "[rapport.benchmarks]\nriddles = riddles:RiddleBenchmark\n"
    )
    monkeypatch.syspath_prepend(str(site))
    monkeypatch.syspath_prepend(str(FIXTURES))
    monkeypatch.setattr(_registry, "_LOADED", {})
    yield site
    BENCHMARKS.pop("riddles", None)


def _run(run_dir: Path) -> list[str]:
    return [
        "run", "riddles", "--memory", "none,full_history", "--model", "all=scripted/echo",
        "--users", "2", "--sessions", "2", "--max-turns", "3", "--no-progress",
        "--run-dir", str(run_dir),
    ]  # fmt: skip


def test_an_outside_benchmark_runs_and_reports(
    riddles: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run_dir = tmp_path / "run"
    assert main(_run(run_dir)) == 0
    with RunStore(run_dir, create=False) as store:
        records = store.sessions("none")
    assert len(records) == 4 and all(r.status == "ok" for r in records)
    outcome = records[0].outcome
    assert type(outcome).__name__ == "RiddleOutcome"  # read back as its own type
    hints = [e for r in records for e in r.events if type(e).__name__ == "HintEvent"]
    assert hints and all(e.kind == "riddle_hint" for e in hints)

    capsys.readouterr()
    assert main(["report", str(run_dir), "--format", "json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert {"solved", "hints"} <= set(json.dumps(report).replace('"', " ").split())
    assert "Riddle hints" in json.dumps(report)

    client = TestClient(create_app(run_dir))
    page = client.get("/")
    assert page.status_code == 200 and "riddles" in page.text and "solved" in page.text


def test_an_outside_benchmark_is_listed_and_its_settings_checked(
    riddles: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as done:
        main(["run", "riddles", "--help"])
    assert done.value.code == 0 and "hints" in capsys.readouterr().out
    from rapport.envs import benchmark_class

    assert benchmark_class("riddles").__name__ == "RiddleBenchmark"
    assert "riddles" in BENCHMARKS


def test_a_fresh_process_reports_an_outside_benchmark_from_its_store(
    riddles: Path, tmp_path: Path
) -> None:
    run_dir = tmp_path / "run"
    assert main(_run(run_dir)) == 0
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(riddles), str(FIXTURES), *sys.path])}
    done = subprocess.run(
        [sys.executable, "-m", "rapport", "report", str(run_dir)],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "Riddle hints" in done.stdout and "solved" in done.stdout
