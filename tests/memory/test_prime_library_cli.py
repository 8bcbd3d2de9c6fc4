"""``rapport library show|export`` reads the newest PRIME library from a run dir."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rapport.cli import main
from rapport.log import ExperimentConfig, MemoryState, MemoryVersion, SessionRecord
from rapport.memory.prime import Conditions, Experience, ExperienceLibrary
from rapport.store import RunStore


def _library(n: int) -> ExperienceLibrary:
    lib = ExperienceLibrary(model="scripted/builder")
    for i in range(n):
        lib.add(
            Experience(
                id=f"exp-{i}",
                situation="the user is vague",
                action="ask about budget",
                outcome="the user named a budget",
                lesson="ask about money first",
                stage="exploration",
                zone="golden",
                conditions=Conditions(envs=["intention"]),
            )
        )
    lib.commit(added=list(lib.experiences), removed=[], note="distilled")
    return lib


@pytest.fixture
def run_dir(tmp_path: Path) -> Path:
    with RunStore(tmp_path) as store:
        store.create_or_open(ExperimentConfig(benchmark="gym", memory=["prime"]))
        for index, n in enumerate((1, 2)):
            lib = _library(n)
            lib.version = index + 1
            record = SessionRecord(
                condition="prime",
                user_id="intention-0",
                index=index,
                spec_id=f"s{index}",
                split="train",
            )
            state = MemoryState(data={"library": lib.model_dump(mode="json")})
            store.commit_session(
                record,
                MemoryVersion(
                    condition="prime", user_id="intention-0", version=index + 1, state=state
                ),
            )
    return tmp_path


def test_show_prints_the_newest_library_as_markdown(
    run_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["library", "show", str(run_dir)]) == 0
    out = capsys.readouterr().out
    assert "version 2, 2 experiences" in out and "## Golden rules (do this)" in out


def test_export_json_to_a_file_loads_back(run_dir: Path, tmp_path: Path) -> None:
    out = tmp_path / "lib.json"
    assert main(["library", "export", str(run_dir), "--format", "json", "--out", str(out)]) == 0
    assert len(ExperienceLibrary.from_json(out.read_text()).experiences) == 2
    assert json.loads(out.read_text())["model"] == "scripted/builder"


def test_missing_run_or_condition_is_a_usage_error(
    run_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["library", "show", str(tmp_path / "nothing")]) == 2
    assert main(["library", "show", str(run_dir), "--condition", "none"]) == 2
    assert "no experience library" in capsys.readouterr().err
