"""Failure injection is deterministic by seed and leaves state untouched."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

pytest.importorskip("bfcl_eval")

from rapport.envs import create_benchmark
from rapport.envs.prefix import (
    FailurePlan,
    PrefixBenchmark,
    SafeExecutor,
    get_setting,
    plan_failures,
    task_by_id,
)
from rapport.log import ExperimentConfig

NAMES = ["cd", "mkdir", "mv", "grep", "sort", "diff"]


@given(seed=st.integers(0, 10_000), key=st.text(max_size=20))
def test_the_same_seed_and_task_always_fail_the_same_call(seed: int, key: str) -> None:
    assert plan_failures(NAMES, seed=seed, key=key) == plan_failures(NAMES, seed=seed, key=key)


def test_seeds_spread_failures_over_different_calls_and_never_navigation() -> None:
    chosen = {next(iter(plan_failures(NAMES, seed=s, key="t").targets)) for s in range(50)}
    assert len(chosen) > 2
    assert "cd" not in chosen


def test_an_injected_failure_changes_nothing_and_a_retry_succeeds() -> None:
    trial = SafeExecutor(
        task_by_id("multi_turn_base_0"), failures=FailurePlan(targets={"mkdir": 1})
    )
    trial.run("cd(folder='document')")
    failed = trial.run("mkdir(dir_name='temp')")
    assert failed.injected and failed.error and not failed.wrote
    assert "temp" not in trial.run("ls()").result
    retried = trial.run("mkdir(dir_name='temp')")
    assert not retried.injected and retried.wrote


def test_no_live_failure_by_default_and_one_with_the_option() -> None:
    task = task_by_id("multi_turn_base_12")
    settings = [get_setting("error_retry_escalation")]

    def bench(**options: object) -> PrefixBenchmark:
        config = ExperimentConfig(benchmark="prefix", options={"settings": "all", **options})
        created = create_benchmark(config)
        assert isinstance(created, PrefixBenchmark)
        return created

    assert bench().failures(settings, task, 0).targets == {}
    assert len(bench(live_failures=True).failures(settings, task, 0).targets) == 1
    calm = [get_setting("tool_high")]
    assert bench(live_failures=True).failures(calm, task, 0).targets == {}
