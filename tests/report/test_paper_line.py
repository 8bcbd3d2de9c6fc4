"""The report's "differ from the paper" line comes from the paper's values (the benchmark's
paper protocol), not from rapport's defaults, in text, JSON, HTML and the viewer."""

from __future__ import annotations

from pathlib import Path

import pytest
from starlette.testclient import TestClient

from rapport.envs import BENCHMARKS, PaperSetting
from rapport.envs._paper import generic, option
from rapport.envs.scripted import ScriptedBenchmark
from rapport.envs.scripted._benchmark import ScriptedOptions
from rapport.eval import run
from rapport.log import ExperimentConfig
from rapport.report import build_report, render_html, render_text
from rapport.view import create_app


class PaperBench(ScriptedBenchmark):
    """Scripted sessions whose paper fixes 20 sessions, 2 turns and no delay."""

    paper_protocol = (
        PaperSetting("sessions per user", 20, "§5.1", "--sessions", generic("sessions")),
        PaperSetting("turns per session", 2, "Table 2", "--max-turns", generic("max_turns")),
        PaperSetting("delay", 0.0, "App. A", "options.delay", option(ScriptedOptions, "delay")),
    )


@pytest.fixture
def paper_bench(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(BENCHMARKS, "paper-bench", f"{__name__}:PaperBench")


def _run(tmp_path: Path, benchmark: str, **fields: object) -> Path:
    config = ExperimentConfig.model_validate(
        {
            "benchmark": benchmark,
            "users": 1,
            "max_turns": 2,
            "run_dir": tmp_path / "run",
            "models": {"all": "scripted/auto"},
            **fields,
        }
    )
    run(config, progress=False)
    return tmp_path / "run"


def _line(run_dir: Path) -> str:
    text = render_text(build_report(run_dir))
    [line] = [x for x in text.splitlines() if x.startswith("Preset:")]
    return line


@pytest.mark.usefixtures("paper_bench")
def test_the_line_names_the_settings_that_differ_from_the_paper_s_values(tmp_path: Path) -> None:
    # 3 sessions is our default, and the paper's is 20: the line must say so, while the
    # delay (given, and equal to the paper's) and the turns (the paper's) are not named.
    run_dir = _run(tmp_path, "paper-bench", sessions=3, options={"delay": 0.0})
    assert _line(run_dir) == (
        "Preset: none (the paper's protocol); options that differ from the paper: "
        "sessions per user=3 (paper: 20, §5.1)"
    )
    d = build_report(run_dir).description
    assert d is not None and d.differs_from_paper is not None
    assert [(x.setting, x.paper, x.ours, x.option) for x in d.differs_from_paper] == [
        ("sessions per user", 20, 3, "--sessions")
    ]


@pytest.mark.usefixtures("paper_bench")
def test_a_run_that_does_what_the_paper_does_says_none(tmp_path: Path) -> None:
    line = _line(_run(tmp_path, "paper-bench", sessions=20))
    assert line.endswith("options that differ from the paper: none")


def test_a_benchmark_without_a_paper_protocol_says_so(tmp_path: Path) -> None:
    # Options given away from the benchmark's defaults are not "differences from the
    # paper" when no paper values are declared.
    line = _line(_run(tmp_path, "scripted", options={"delay": 0.0, "train_sessions": 1}))
    assert line.endswith("options that differ from the paper: paper protocol not declared")
    description = build_report(tmp_path / "run").description
    assert description is not None and description.differs_from_paper is None


@pytest.mark.usefixtures("paper_bench")
def test_html_and_viewer_show_the_same_words(tmp_path: Path) -> None:
    run_dir = _run(tmp_path, "paper-bench", sessions=3)
    words = "differs from the paper: sessions per user=3 (paper: 20, §5.1)"
    assert words in render_html(build_report(run_dir))
    with TestClient(create_app(run_dir)) as client:
        page = client.get("/")
    row = "<th>differs from the paper</th><td>sessions per user=3 (paper: 20, §5.1)"
    assert page.status_code == 200 and row in page.text
