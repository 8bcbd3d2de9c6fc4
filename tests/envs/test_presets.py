"""Presets: named adaptations of a benchmark's paper protocol, applied under a run's own
options, named in the stored config and the report."""

from __future__ import annotations

from pathlib import Path

import pytest

from rapport.cli import main
from rapport.envs import (
    PRESETS,
    Preset,
    UnknownPresetError,
    apply_preset,
    get_preset,
    memory_options_for,
    register_preset,
)
from rapport.envs.collab import SMALL_PRESET, CollabBenchmark
from rapport.log import ExperimentConfig
from rapport.store import RunStore


def test_small_is_registered_and_says_what_it_changes() -> None:
    # Collab and the gyms each declare their part of it; nothing shared names it.
    assert "small" not in PRESETS and CollabBenchmark.presets == (SMALL_PRESET,)
    small = get_preset("small")
    assert small.summary == SMALL_PRESET.summary and small.__doc__ == small.summary
    assert small.options["collab"] == SMALL_PRESET.options["collab"]
    assert small.benchmarks == ["collab", "collab-ablation", "gym"]


def test_a_preset_goes_under_the_options_a_run_gives() -> None:
    config = ExperimentConfig(benchmark="collab", preset="small", options={"grader": "judge"})
    options = apply_preset(config).options
    assert options["session"] == "guarded" and options["agent_length_rule"] is True
    assert options["grader"] == "judge"  # the run's own option wins


def test_memory_options_layer_paper_then_preset_then_run() -> None:
    paper = {"reflection": {"form": "msc"}}
    plain = ExperimentConfig(benchmark="collab")
    assert memory_options_for(plain, paper, {"reflection"}) == {"reflection": {"form": "msc"}}
    assert memory_options_for(plain, paper, {"none"}) == {}
    small = ExperimentConfig(
        benchmark="collab", preset="small", memory_options={"reflection": {"select": False}}
    )
    layered = memory_options_for(small, paper, {"reflection"})
    assert layered == {"reflection": {"form": "list", "select": False}}


def test_unknown_preset_and_a_preset_for_another_benchmark_are_refused() -> None:
    with pytest.raises(UnknownPresetError, match="unknown preset 'tiny'"):
        apply_preset(ExperimentConfig(benchmark="collab", preset="tiny"))
    with pytest.raises(UnknownPresetError, match="nothing for benchmark 'scripted'"):
        apply_preset(ExperimentConfig(benchmark="scripted", preset="small"))


def test_a_registered_preset_is_used_by_name() -> None:
    mine = Preset(
        name="mine", summary="Code grading only.", options={"collab": {"grader": "match"}}
    )
    register_preset("mine", mine)
    try:
        config = apply_preset(ExperimentConfig(benchmark="collab", preset="mine"))
        assert config.options == {"grader": "match"}
    finally:
        PRESETS.pop("mine")


def _run(tmp_path: Path, *extra: str) -> list[str]:
    argv = ["run", "collab", "--users", "1", "--sessions", "1", "--max-turns", "2"]
    argv += ["--memory", "none", "--model", "all=scripted/auto", "--no-progress"]
    return [*argv, "--run-dir", str(tmp_path / "r"), *extra]


def test_the_run_stores_the_preset_and_the_report_names_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(_run(tmp_path, "--preset", "small")) == 0, capsys.readouterr().err
    out = capsys.readouterr().out
    # Which settings differ is the paper protocol's to say (tests/report/test_paper_line.py).
    assert "Preset: small; options that differ from the paper: " in out
    config = RunStore(tmp_path / "r", create=False).run().config
    assert config.preset == "small" and config.options["grader"] == "match"


def test_the_default_run_says_it_is_the_papers(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(_run(tmp_path)) == 0, capsys.readouterr().err
    out = capsys.readouterr().out
    assert "Preset: none (the paper's protocol); options that differ from the paper: " in out


def test_an_unknown_preset_is_one_line_and_writes_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(_run(tmp_path, "--preset", "tiny")) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "unknown preset 'tiny'" in err[0]
    assert not (tmp_path / "r").exists()


def test_the_report_names_the_paper_s_data_a_run_read_and_the_data_it_left_at_ours(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    checkout = Path(__file__).parent / "collab" / "data" / "msc_checkout"
    assert main(_run(tmp_path, "--prompts-from", str(checkout))) == 0, capsys.readouterr().err
    [line] = [x for x in capsys.readouterr().out.splitlines() if x.startswith("Preset:")]
    assert "; options that differ from the paper: " in line
    own = line.split("rapport's own data, not the paper's: ", 1)[1].split("; data read from")[0]
    assert own.startswith("problems (paper: MSC's cached test problems")
    assert "profiles (paper: MSC's profiles" in own and "prompts_from" not in own
    assert line.endswith(f"; data read from: prompts_from={checkout}")
