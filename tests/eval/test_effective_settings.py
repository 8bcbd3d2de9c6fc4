"""A run stores the settings it ran with (benchmark options typed, defaults included), and
`rapport.run` returns its scores."""

from __future__ import annotations

from pathlib import Path

import pytest

import rapport
from rapport.cli import main
from rapport.envs.gyms import GymOptions
from rapport.eval import prepare_experiment
from rapport.log import ExperimentConfig
from rapport.report import build_report
from rapport.store import RunStore


def test_gym_options_given_as_text_are_stored_typed_with_their_defaults(tmp_path: Path) -> None:
    argv = ["run", "gym", "--env", "function", "--train-episodes", "1", "--eval-episodes", "2"]
    argv += ["--users", "1", "--model", "all=scripted/auto", "--no-progress"]
    assert main([*argv, "--run-dir", str(tmp_path / "run")]) == 0
    with RunStore.open_readonly(tmp_path / "run") as store:
        stored = store.run().config.options
    assert stored["eval_episodes"] == 2 and stored["train_episodes"] == 1
    assert stored["env"] == ["function"]
    defaults = GymOptions().model_dump(mode="json")
    assert stored == defaults | {"env": ["function"], "train_episodes": 1, "eval_episodes": 2}
    description = build_report(tmp_path / "run", light=True).description
    assert description is not None and description.benchmark_options == stored


def test_a_header_stored_with_options_as_given_still_resumes(tmp_path: Path) -> None:
    config = ExperimentConfig(
        benchmark="scripted",
        users=1,
        sessions=2,
        run_dir=tmp_path / "run",
        models={"all": "scripted/auto"},
        options={"train_sessions": "1"},
        cache=False,
    )
    # A run dir written before options were stored typed: its header holds them as given.
    with RunStore(config.run_dir) as store:
        store.create_or_open(config)
    result = rapport.run(config, progress=False)
    assert result.sessions_run == 2
    with RunStore.open_readonly(config.run_dir) as store:
        assert store.run().config.options == {"train_sessions": "1"}
    other = config.model_copy(update={"options": {"train_sessions": 0}})
    with pytest.raises(rapport.eval.ExperimentError, match="different config"):
        rapport.run(other, progress=False)


def test_options_a_benchmark_does_not_model_are_kept_as_given(tmp_path: Path) -> None:
    config = ExperimentConfig(
        benchmark="scripted", run_dir=tmp_path / "run", models={"all": "scripted/auto"}
    )
    experiment = prepare_experiment(config)
    assert experiment.config.options == {"delay": 0.0, "train_sessions": 0}


def test_run_returns_the_scores_the_report_shows(tmp_path: Path) -> None:
    config = ExperimentConfig(
        benchmark="scripted",
        memory=["none", "oracle"],
        users=3,
        sessions=2,
        run_dir=tmp_path / "run",
        models={"all": "scripted/auto"},
        cache=False,
    )
    result = rapport.run(config, progress=False)
    report = build_report(config.run_dir)
    assert list(result.scores) == ["none", "oracle"]
    assert result.scores == report.conditions
    assert list(result.scores["none"]) == ["hit", "words"]
    assert result.scores["none"]["words"].sessions == 6


def test_memory_options_are_recorded_with_their_defaults(tmp_path: Path) -> None:
    argv = ["run", "scripted", "--memory", "none,rag", "--users", "1", "--sessions", "1"]
    argv += ["--model", "all=scripted/auto", "--no-progress", "--run-dir", str(tmp_path / "r")]
    config_file = tmp_path / "c.yaml"
    config_file.write_text("memory_options:\n  rag:\n    k: 2\n")
    assert main([*argv, "--config", str(config_file)]) == 0
    description = build_report(tmp_path / "r", light=True).description
    assert description is not None
    rag = description.memory_options["rag"]
    assert rag["k"] == 2  # as given
    assert rag == {"k": 2, "backend": "auto", "notes_in": None}  # the others at their defaults
    assert description.memory_options["none"] == {"notes_in": None}
