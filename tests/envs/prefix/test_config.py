"""configs/prefix-main.yaml runs every published sample of the 31 settings, both conditions,
with the paper's judging."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import yaml

pytest.importorskip("bfcl_eval")

from rapport.envs import create_benchmark
from rapport.envs.prefix import PrefixBenchmark, get_setting
from rapport.log import ExperimentConfig

ROOT = Path(__file__).parents[3]
PUBLISHED = Path(__file__).parent / "data" / "published"


def test_the_main_config_plays_every_fixed_task_of_every_setting(tmp_path: Path) -> None:
    raw = yaml.safe_load((ROOT / "configs" / "prefix-main.yaml").read_text("utf-8"))
    # a copy: choosing tasks caches their write counts on the (shared) opened task data
    data = shutil.copytree(PUBLISHED / "bfcl_v3", tmp_path / "bfcl_v3")
    options = raw["options"] | {
        "task_data": str(data),
        "coarsened": str(PUBLISHED / "PrefIX"),
        "rubric_from": str(PUBLISHED / "PrefIX"),
    }
    config = ExperimentConfig(benchmark="prefix", options=options, models={"all": "scripted/auto"})
    bench = create_benchmark(config)
    assert isinstance(bench, PrefixBenchmark)
    o = bench.options
    assert len(o.settings) == 31 and o.condition == ["no_p", "p"]
    assert (o.judging, o.matching, o.reliability) == ("per_dimension", "prefix", "paper")
    users = bench.users(0, 0)
    for user in users:
        fixed = bench.fixed_tasks([get_setting(s) for s in user.preferences])
        played = bench.sessions(user, 1, seed=0)
        if fixed is not None:  # every task of the setting's file, none left out
            assert sorted(s.id for s in played) == sorted(f.task.id for f in fixed.tasks)
    assert any(bench.fixed_tasks([get_setting(u.preferences[0])]) for u in users)


def test_judge_repeats_are_refused_outside_the_repeats_protocol() -> None:
    from pydantic import ValidationError

    from rapport.envs.prefix import PrefixOptions

    with pytest.raises(ValidationError, match="judge_repeats needs reliability 'repeats'"):
        PrefixOptions.model_validate({"judge_repeats": 3})
    assert PrefixOptions.model_validate({"judge_repeats": 3, "reliability": "repeats"})
