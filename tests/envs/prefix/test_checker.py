"""Accuracy's two call matchings: PrefIX's normalised strings (the default) and ours."""

from __future__ import annotations

import pytest

from rapport.envs.prefix._checker import normalise_call, prefix_call_string, ratio_coverage

pytest.importorskip("bfcl_eval")

from rapport.envs.prefix import check_accuracy, parse_call, replay_turns, task_by_id

TASK = task_by_id("multi_turn_base_12")


def test_normalisation_drops_spaces_around_brackets_commas_and_equals() -> None:
    assert normalise_call(" cd( folder = 'a' , x=1 ) ") == "cd(folder='a',x=1)"
    assert normalise_call("echo(content='a, b = c')") == "echo(content='a,b=c')"


def test_ratio_coverage_counts_duplicates_without_order() -> None:
    reference = ["ls()", "cd(folder='a')", "cd(folder='a')", "wc(file_name='f', mode='l')"]
    made = ["cd(folder = 'a')", "wc(mode='l',file_name='f')", "ls()", "pwd()"]
    matched, missing = ratio_coverage(reference, made)
    assert matched == 2  # one of the two cds; wc's keywords are in another order
    assert missing == ["cd(folder='a')", "wc(file_name='f',mode='l')"]


def test_a_decoded_call_is_written_in_the_agents_argument_order() -> None:
    assert prefix_call_string("wc", {"mode": "l", "file_name": "f"}) == "wc(mode='l',file_name='f')"


def _reordered(turns: list[list[str]]) -> list[list[str]]:
    """The ground truth with each call's keyword arguments in reverse order."""
    out = []
    for calls in turns:
        row = []
        for call in calls:
            parsed = parse_call(call)
            kwargs = dict(reversed(list(parsed.kwargs.items())))
            row.append(f"{parsed.name}({', '.join(f'{k}={v!r}' for k, v in kwargs.items())})")
        out.append(row)
    return out


def test_keyword_order_matters_to_prefix_matching_and_not_to_canonical() -> None:
    truth = check_accuracy(TASK, replay_turns(TASK, TASK.ground_truth))
    assert truth.accuracy == 1.0 and truth.matching == "prefix"
    trial = replay_turns(TASK, _reordered(TASK.ground_truth))
    several = [c for c in TASK.reference_calls if len(parse_call(c).kwargs) > 1]
    prefix = check_accuracy(TASK, trial)
    canonical = check_accuracy(TASK, trial, "canonical")
    assert several  # the task has calls with two or more keywords
    assert prefix.matched == prefix.reference - len(several)
    assert canonical.accuracy == 1.0 and canonical.matching == "canonical"
