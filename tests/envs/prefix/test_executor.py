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
    system_tools,
    task_by_id,
)
from rapport.envs.prefix._checker import replay_turns


@pytest.mark.parametrize("category", ["base", "miss_param", "miss_func", "long_context"])
def test_replaying_ground_truth_turn_by_turn_scores_full_accuracy(category: str) -> None:
    tasks = load_tasks(category)  # type: ignore[arg-type]
    assert len(tasks) == 200
    passed = covered = as_strings = 0.0
    for task in tasks:
        trial = replay_turns(task, task.ground_truth)
        assert not any(c.refused for c in trial.log), task.id
        result = check_accuracy(task, trial, "canonical")
        passed += result.bfcl_pass
        covered += result.accuracy
        as_strings += check_accuracy(task, trial).accuracy
    assert passed / len(tasks) == 1.0 and covered / len(tasks) == 1.0
    # PrefIX's string matching misses references written otherwise than an agent's calls
    # (positional arguments, other quoting), so the ground truth scores at most 1 there
    assert as_strings <= covered


@pytest.mark.parametrize("task_id", ["multi_turn_base_0", "multi_turn_long_context_3"])
def test_every_call_in_the_last_turn_fails_as_in_bfcl_eval(task_id: str) -> None:
    task = task_by_id(task_id)
    late = [[] for _ in task.ground_truth[:-1]] + [task.reference_calls]
    result = check_accuracy(task, replay_turns(task, late), "canonical")
    assert result.bfcl_pass == 0.0 and result.failed_turn == 0
    assert result.error_type == "multi_turn:empty_turn_model_response"
    assert result.accuracy == 1.0  # PrefIx's coverage is unordered: every call was made
    early = [task.reference_calls] + [[] for _ in task.ground_truth[1:]]
    first = check_accuracy(task, replay_turns(task, early))
    assert first.bfcl_pass == 0.0 and first.failed_turn == 0


def test_all_calls_in_the_last_turn_pass_almost_never_over_the_base_category() -> None:
    passed = 0.0
    for task in load_tasks("base"):
        late = [[] for _ in task.ground_truth[:-1]] + [task.reference_calls]
        passed += check_accuracy(task, replay_turns(task, late)).bfcl_pass
    assert passed <= 5  # bfcl-eval's checker passes 3 of 200 such trajectories


def test_a_trial_that_skips_a_write_loses_accuracy_and_coverage() -> None:
    task = task_by_id("multi_turn_base_0")
    turns = [list(t) for t in task.ground_truth]
    turns[-1] = turns[-1][:-1]
    result = check_accuracy(task, replay_turns(task, turns), "canonical")
    assert result.bfcl_pass == 0.0 and not result.success
    assert result.accuracy < 1.0 and len(result.missing) == 1


def test_a_held_back_function_is_only_offered_from_its_turn() -> None:
    tasks = [t for t in load_tasks("miss_func") if t.missed_functions]
    assert len(tasks) == 200
    for task in tasks:
        for turn, names in task.missed_functions.items():
            assert not set(names) & {s.name for s in system_tools(task, turn - 1)}
            assert set(names) <= {s.name for s in system_tools(task, turn)}


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


@pytest.mark.parametrize("category", ["base", "long_context"])
def test_the_per_turn_verdict_agrees_with_bfcl_evals_own_checker(category: str) -> None:
    import json

    from bfcl_eval.eval_checker.multi_turn_eval.multi_turn_checker import multi_turn_checker

    from rapport.envs.prefix._tasks import data_dir

    path = data_dir() / f"BFCL_v4_multi_turn_{category}.json"
    entries = {e["id"]: e for e in map(json.loads, path.read_text().splitlines()) if e}
    for n, task in enumerate(load_tasks(category)[:8]):  # type: ignore[arg-type]
        truth = [list(t) for t in task.ground_truth]
        late = [[] for _ in truth[:-1]] + [task.reference_calls]
        dropped = [*truth[:-1], truth[-1][:-1]]
        for kind, turns in {"truth": truth, "late": late, "dropped": dropped}.items():
            ours = check_accuracy(task, replay_turns(task, turns)).success
            decoded = [[calls] if calls else [] for calls in turns]
            name = f"rapport_probe_{category}_{kind}_{n}"  # bfcl keeps instances per name
            theirs = multi_turn_checker(decoded, task.ground_truth, entries[task.id], "", name)
            assert ours == theirs["valid"], (task.id, kind)


def test_three_of_four_reference_calls_is_accuracy_075_while_bfcl_fails_the_task() -> None:
    task = task_by_id("multi_turn_base_7")
    assert len(task.reference_calls) == 4
    # every call but the last, each in its turn; the last turn makes none
    turns = [list(t) for t in task.ground_truth]
    turns[-1] = []
    result = check_accuracy(task, replay_turns(task, turns))
    assert result.accuracy == 0.75 and (result.matched, result.reference) == (3, 4)
    assert result.bfcl_pass == 0.0 and result.error_type == "multi_turn:empty_turn_model_response"


def test_an_accuracy_stored_with_coverage_reads_back_in_todays_fields() -> None:
    from rapport.envs.prefix import Accuracy

    old = {"accuracy": 0.0, "coverage": 0.5, "turns": 2, "turns_passed": 0}
    old |= {"matched": 1, "reference": 2}
    read = Accuracy.model_validate(old)
    assert (read.accuracy, read.bfcl_pass) == (0.5, 0.0)
