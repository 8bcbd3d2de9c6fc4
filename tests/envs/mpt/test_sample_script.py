"""benchmarks/mpt_sample.py: a subset of a release's examples that builds the same instances."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from types import ModuleType

import pytest

from rapport.envs.mpt import read_release, release_users

from .release_fixture import EXAMPLES, write_release

SCRIPT = Path(__file__).parents[3] / "benchmarks" / "mpt_sample.py"


def _script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("mpt_sample", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _instances(root: Path, data: Path | None = None) -> dict[str, list[str]]:
    inputs = read_release(root, "tiny-v1", data)
    return {u["id"]: [i["id"] for i in u["instances"]] for u in release_users(inputs)}


def test_a_subset_builds_the_chosen_examples_instances_unchanged(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = write_release(tmp_path / "release")
    empty = {**EXAMPLES[0], "example_id": "ex-empty", "api_calls": [], "api_calls_pref": []}
    empty["sessions"] = []
    data = tmp_path / "data.json"
    data.write_text(json.dumps([empty, *EXAMPLES]), "utf-8")
    out = tmp_path / "subset.json"
    rc = _script().main(
        [
            "--release",
            str(root),
            "--dataset",
            "tiny-v1",
            "--data",
            str(data),
            "--first",
            "1",
            "--out",
            str(out),
        ]
    )
    assert rc == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["examples_in_data"] == 3 and summary["examples_with_instances"] == 2
    # The example without instances is passed over: the first usable one is ex-1.
    assert [c["example_id"] for c in summary["chosen"]] == [EXAMPLES[0]["example_id"]]
    assert json.loads(out.read_text("utf-8")) == [EXAMPLES[0]]
    whole, subset = _instances(root, data), _instances(root, out)
    assert subset == {k: v for k, v in whole.items() if k in subset} and len(subset) == 1
    assert summary["instances"] == len(next(iter(subset.values())))


def test_ids_keep_source_order_and_unknown_ids_or_too_many_are_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = write_release(tmp_path / "release")
    script = _script()
    ids = ",".join(e["example_id"] for e in reversed(EXAMPLES))
    out = tmp_path / "subset.json"
    base = ["--release", str(root), "--dataset", "tiny-v1"]
    assert script.main([*base, "--ids", ids, "--out", str(out)]) == 0
    assert json.loads(out.read_text("utf-8")) == EXAMPLES
    capsys.readouterr()
    assert script.main([*base, "--ids", "nope"]) == 2
    assert "not in the data: nope" in capsys.readouterr().err
    assert script.main([*base, "--first", "2", "--draw", "1"]) == 2
    assert "2 examples yield instances" in capsys.readouterr().err
