"""The safe executor: ground truth replays to 100%; anything else is refused, never run."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("bfcl_eval")

from rapport.envs.prefix import (
    CallRefused,
    SafeExecutor,
    check_accuracy,
    load_tasks,
    parse_call,
    replay_reference,
    task_by_id,
)


@pytest.mark.parametrize("category", ["base", "miss_param"])
def test_replaying_ground_truth_scores_full_accuracy(category: str) -> None:
    tasks = load_tasks(category)  # type: ignore[arg-type]
    assert len(tasks) == 200
    scores = []
    for task in tasks:
        trial = SafeExecutor(task)
        for call in task.reference_calls:
            assert not trial.run(call).refused, call
        result = check_accuracy(task, trial)
        scores.append(result.accuracy if result.success else 0.0)
    assert sum(scores) / len(scores) == 1.0


def test_a_trial_that_skips_a_write_loses_accuracy() -> None:
    task = task_by_id("multi_turn_base_0")
    trial = SafeExecutor(task)
    for call in task.reference_calls[:-2]:
        trial.run(call)
    result = check_accuracy(task, trial)
    assert result.accuracy < 1.0
    assert not result.success


@pytest.mark.parametrize(
    "text",
    [
        "__import__('os').system('touch {marker}')",
        "os.system('touch {marker}')",
        "ls(a=__import__('os').system('touch {marker}'))",
        "mkdir(dir_name=open('{marker}', 'w').name)",
        "[mkdir(dir_name='x') for _ in range(2)]",
    ],
)
def test_code_in_a_call_string_is_refused_and_never_runs(text: str, tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    trial = SafeExecutor(task_by_id("multi_turn_base_0"))
    result = trial.run(text.format(marker=marker))
    assert result.refused
    assert not marker.exists()
    with pytest.raises(CallRefused):
        parse_call(text.format(marker=marker))


def test_calls_outside_the_involved_classes_are_refused_without_side_effects() -> None:
    task = task_by_id("multi_turn_base_0")  # file system + Twitter only
    trial = SafeExecutor(task)
    before = repr(vars(trial.instances["GorillaFileSystem"]))
    for name, args in [
        ("logarithm", {"value": 8, "base": 2}),
        ("_load_scenario", {"scenario": {}}),
    ]:
        result = trial.call(name, args)
        assert result.refused
    assert trial.call("mkdir", {"dir_name": object()}).refused  # not a literal
    assert repr(vars(trial.instances["GorillaFileSystem"])) == before


def test_each_trial_starts_from_the_initial_state() -> None:
    task = task_by_id("multi_turn_base_0")
    first = SafeExecutor(task)
    first.run("cd(folder='document')")
    first.run("mkdir(dir_name='temp')")
    second = SafeExecutor(task)
    assert "temp" not in second.run("ls()").result
    assert replay_reference(task).results == replay_reference(task).results


def test_writes_are_told_from_reads() -> None:
    trial = SafeExecutor(task_by_id("multi_turn_base_0"))
    assert not trial.run("cd(folder='document')").wrote
    assert trial.run("mkdir(dir_name='temp')").wrote
    assert not trial.run("ls()").wrote
