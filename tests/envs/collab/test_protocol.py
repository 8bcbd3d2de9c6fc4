"""MultiSessionCollab's paper protocol: every row "same" or with a reason, for the defaults and
for configs/msc-main.yaml on a checkout laid out as MSC's (our own fixture files); docs'
table of differences is what `rapport protocol collab` prints."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from rapport.cli import main
from rapport.envs import apply_preset, protocol_rows
from rapport.envs.collab import MSC_DATASETS, CollabBenchmark
from rapport.log import ExperimentConfig

ROOT = Path(__file__).resolve().parents[3]
FIXTURE = Path(__file__).parent / "data" / "msc_checkout"
BEGIN, END = "<!-- rapport protocol collab -->", "<!-- end -->"


def checkout(root: Path, profiles: int = 100) -> Path:
    """A MultiSessionCollab checkout in MSC's layout: our prompts fixture, one cached test
    and train file per dataset, and `profiles` profiles."""
    target = root / "multisessioncollab"
    shutil.copytree(FIXTURE, target)
    for dataset in MSC_DATASETS:
        folder = target / "collaborativeagents" / "datasets" / "cache" / dataset.replace("-h", "_h")
        folder.mkdir(parents=True)
        for split in ("test", "train"):
            rows = [
                {"problem": f"{split} {n} + {n}?", "solution": f"\\boxed{{{2 * n}}}"}
                for n in range(20)
            ]
            (folder / f"{split}set_size20_seed42.json").write_text(json.dumps(rows))
    phrases = [
        "Be directly to the point in every reply.",
        "Give replies in bullet-point format, one idea a line.",
        "Show step-by-step reasoning before the result.",
    ]
    rows = [
        {"i": i, "persona": f"P{i}.", "categories": [], "preferences": phrases}
        for i in range(profiles)
    ]
    folder = target / "collaborativeagents" / "user_profiles"
    folder.mkdir(parents=True)
    (folder / "user_profiles.json").write_text(json.dumps(rows))
    return target


def test_every_default_row_is_the_paper_s_or_says_why() -> None:
    rows = protocol_rows(CollabBenchmark, ExperimentConfig(benchmark="collab"))
    assert [r.setting.name for r in rows if not r.same and not r.setting.note] == []
    assert any(not r.same for r in rows)  # rapport ships none of MSC's data


def test_msc_main_differs_only_where_it_says_why(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    checkout(tmp_path)
    monkeypatch.chdir(tmp_path)
    config = str(ROOT / "configs" / "msc-main.yaml")
    assert main(["protocol", "collab", "--config", config, "--format", "json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    differing = {r["setting"]: r["note"] for r in rows if not r["same"]}
    assert list(differing) == ["agent context limit"]
    assert all(differing.values())
    by_name = {r["setting"]: r["ours"] for r in rows}
    assert by_name["datasets"] == list(MSC_DATASETS)
    assert by_name["users per dataset"] == 100
    assert by_name["memory model"] == "the agent's model"


def test_a_run_without_the_memory_role_writes_notes_with_the_agent_s_model() -> None:
    config = ExperimentConfig(
        benchmark="collab",
        memory=["none", "reflection"],
        models={"agent": "scripted/auto", "user": "scripted/user", "judge": "scripted/judge"},
    )
    assert apply_preset(config).models["memory"] == "scripted/auto"
    alone = config.model_copy(update={"memory": ["none"]})
    assert "memory" not in apply_preset(alone).models  # nothing asks for the role
    named = config.model_copy(update={"models": {**config.models, "memory": "scripted/m"}})
    assert apply_preset(named).models["memory"] == "scripted/m"


def test_docs_table_of_differences_is_the_protocol(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["protocol", "collab", "--format", "markdown"]) == 0
    printed = capsys.readouterr().out.strip()
    docs = (ROOT / "docs" / "collab.md").read_text(encoding="utf-8")
    shown = docs.split(BEGIN, 1)[1].split(END, 1)[0].strip()
    assert shown == printed


def test_a_reflection_option_the_form_does_not_read_is_one_line_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = tmp_path / "reflector.yaml"
    config.write_text("memory_options:\n  reflection: {layout: tags}\n")
    run_dir = tmp_path / "run"
    argv = ["run", "collab", "--config", str(config), "--memory", "reflection"]
    argv += ["--model", "all=scripted/auto", "--run-dir", str(run_dir), "--no-progress"]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "layout applies to form list" in err and err.count("\n") == 1
    assert not (run_dir / "run.sqlite").exists()
