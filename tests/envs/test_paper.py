"""A benchmark's paper protocol: each setting beside a config's value, and `rapport protocol`."""

from __future__ import annotations

import json

import pytest

from rapport.cli import main
from rapport.envs import BENCHMARKS, PaperSetting, differing, protocol_rows
from rapport.envs._paper import generic, option
from rapport.envs.scripted import ScriptedBenchmark
from rapport.envs.scripted._benchmark import ScriptedOptions
from rapport.log import ExperimentConfig


class PaperBench(ScriptedBenchmark):
    """Scripted sessions with a paper that fixes three settings."""

    paper_protocol = (
        PaperSetting("sessions per user", 20, "§5.1", "--sessions", generic("sessions")),
        PaperSetting(
            "turns per session", 10, "Table 2", "--max-turns", generic("max_turns"), note="why"
        ),
        PaperSetting("delay", 0.0, "App. A", "options.delay", option(ScriptedOptions, "delay")),
    )


@pytest.fixture
def paper_bench(monkeypatch: pytest.MonkeyPatch) -> type[PaperBench]:
    monkeypatch.setitem(BENCHMARKS, "paper-bench", f"{__name__}:PaperBench")
    return PaperBench


def _config(**fields: object) -> ExperimentConfig:
    return ExperimentConfig.model_validate({"benchmark": "paper-bench", **fields})


def test_rows_compare_the_config_with_the_paper(paper_bench: type[PaperBench]) -> None:
    rows = protocol_rows(paper_bench, _config(sessions=20, options={"delay": 0.5}))
    assert [(r.setting.name, r.value, r.same) for r in rows] == [
        ("sessions per user", 20, True),
        ("turns per session", 10, True),
        ("delay", 0.5, False),
    ]
    assert [r.setting.name for r in differing(paper_bench, _config())] == ["sessions per user"]


def test_an_unreadable_option_makes_its_row_differ_with_the_reason(
    paper_bench: type[PaperBench],
) -> None:
    row = protocol_rows(paper_bench, _config(options={"delay": -1}))[2]
    assert not row.same
    assert "delay" in row.error


def test_an_option_the_model_lacks_is_refused_when_declared() -> None:
    with pytest.raises(KeyError, match="no option 'speed'"):
        option(ScriptedOptions, "speed")


def test_the_command_prints_every_row_with_its_source(
    paper_bench: type[PaperBench], capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["protocol", "paper-bench", "--sessions", "20", "--format", "json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert [(r["setting"], r["source"], r["same"]) for r in rows] == [
        ("sessions per user", "§5.1", True),
        ("turns per session", "Table 2", True),
        ("delay", "App. A", True),
    ]
    assert main(["protocol", "paper-bench"]) == 0
    text = capsys.readouterr().out
    assert "differs" in text and "2 of 3 settings as the paper" in text
    assert main(["protocol", "paper-bench", "--format", "markdown"]) == 0
    assert "| sessions per user | 20 | §5.1 | 3 | --sessions | differs |" in capsys.readouterr().out


def test_an_unknown_benchmark_is_one_line_and_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as stop:
        main(["protocol", "no-such-bench"])
    assert stop.value.code == 2
    assert "no-such-bench" in capsys.readouterr().err
