"""Seeded runs of every benchmark on the ``scripted/auto`` model give byte-identical reports.

The golden files pin what each benchmark and memory produce end to end, so a change to the
harness (the session loop, the store, the report) that alters a result shows up here. A change
that is meant to alter results regenerates them: ``RAPPORT_UPDATE_GOLDEN=1 pytest`` this file,
and the diff of ``tests/eval/golden/`` is reviewed with the change.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from rapport.envs import benchmark_class
from rapport.eval import run
from rapport.log import ExperimentConfig
from rapport.report import build_report, render_text

GOLDEN = Path(__file__).parent / "golden"
HASHING = {"embedder": "hashing"}
MACHINE = ("git_revision", "git_dirty", "packages", "python", "platform", "rapport_version")

RUNS: dict[str, dict[str, Any]] = {
    "scripted": {"benchmark": "scripted", "memory": ["none", "oracle"], "sessions": 2},
    "collab": {
        "benchmark": "collab",
        "memory": ["none", "reflection", "oracle"],
        "sessions": 2,
        "max_turns": 3,
        "options": {"problems": "generated"},
    },
    "mpt": {
        "benchmark": "mpt",
        "memory": ["none", "full_history", "rag", "prefine"],
        "options": {"max_eval": 4},
        "memory_options": {"rag": {"backend": "bm25"}},
    },
    "prefix": {
        "benchmark": "prefix",
        "options": {"condition": "no_p,p", "settings": "each_confirmation,tool_medium"},
        "models": {"all": "scripted/auto", "judge2": "scripted/auto"},
    },
    "gym": {
        "benchmark": "gym",
        "memory": ["none", "reflexion", "prime"],
        "users": 1,
        "options": {
            "env": "function,telepathy,turtle,intention",
            "train_episodes": 2,
            "eval_episodes": 1,
            "horizon": 4,
        },
        "memory_options": {"prime": HASHING},
    },
}


def _report(name: str, run_dir: Path) -> str:
    fields: dict[str, Any] = {"seed": 3, "models": {"all": "scripted/auto"}}
    if "users" in benchmark_class(RUNS[name]["benchmark"]).uses:
        fields["users"] = 2
    fields |= RUNS[name]
    config = ExperimentConfig(run_dir=run_dir, **fields)
    run(config, progress=False)
    report = build_report(run_dir)
    document = report.to_json() | {"run_id": "-", "run_dir": "-"}
    # What the run ran on (code revision, packages, machine) is not a result.
    document["description"] |= {key: "-" for key in MACHINE}
    document["description"]["config"]["run_dir"] = "-"
    return json.dumps(document, indent=1, sort_keys=True) + "\n\n" + render_text(report) + "\n"


@pytest.mark.parametrize("name", sorted(RUNS))
def test_report_is_byte_identical_to_golden(name: str, tmp_path: Path, rapport_home: Path) -> None:
    got = _report(name, tmp_path / "run")
    path = GOLDEN / f"{name}.txt"
    if os.environ.get("RAPPORT_UPDATE_GOLDEN"):
        GOLDEN.mkdir(exist_ok=True)
        path.write_text(got)
    assert got == path.read_text()
