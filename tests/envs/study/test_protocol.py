"""What the paper and the authors' app fix for the study, beside a study's settings; the
table in docs/study.md is the command's output."""

from __future__ import annotations

from pathlib import Path

import pytest

from rapport.cli import main
from rapport.envs import differing, protocol_rows
from rapport.envs.study import StudyBenchmark, default_design, load_design
from rapport.log import ExperimentConfig
from rapport.store import RunStore
from rapport.study import create_study

ROOT = Path(__file__).parents[3]
DOCS = ROOT / "docs" / "study.md"
EXAMPLE = ROOT / "docs" / "study-design.yaml"
MARK = "<!-- rapport protocol study --format markdown -->\n"


def test_docs_table_of_differences_is_the_commands_output(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["protocol", "study", "--format", "markdown"]) == 0
    printed = capsys.readouterr().out.strip()
    text = DOCS.read_text()
    shown = text.split(MARK, 1)[1].split("<!-- end -->", 1)[0].strip()
    assert shown == printed


def test_the_shipped_design_is_the_documented_example() -> None:
    shipped = Path(str(ROOT / "src" / "rapport" / "envs" / "study" / "design.yaml"))
    assert shipped.read_text() == EXAMPLE.read_text()
    assert default_design() == load_design(EXAMPLE)


def _study_config(tmp_path: Path, **kwargs: object) -> ExperimentConfig:
    made = create_study(EXAMPLE, 2, tmp_path / "study", **kwargs)  # type: ignore[arg-type]
    with RunStore.open_readonly(made.study_dir) as store:
        return store.run().config


def test_a_study_on_a_served_llama_70b_differs_only_where_rapport_chooses_to(
    tmp_path: Path,
) -> None:
    agent = {"spec": "openai/meta-llama/Llama-3.3-70B-Instruct", "temperature": 0.7}
    config = _study_config(tmp_path, models={"agent": {**agent, "max_tokens": 2048}})
    names = [row.setting.name for row in differing(StudyBenchmark, config)]
    assert names == [
        "block order",
        "problems and preference wordings",
        "initial notes",
        "closing questionnaire",
        "participants",
    ]


def test_a_design_that_turns_the_pick_on_is_told_apart(tmp_path: Path) -> None:
    design = tmp_path / "design.yaml"
    design.write_text(EXAMPLE.read_text() + "memory_options:\n  reflection: {select: true}\n")
    made = create_study(design, 1, tmp_path / "study", models={"all": "scripted/auto"})
    with RunStore.open_readonly(made.study_dir) as store:
        config = store.run().config
    rows = {r.setting.name: r for r in protocol_rows(StudyBenchmark, config)}
    assert rows["per-turn pick of notes"].value is True
    assert not rows["per-turn pick of notes"].same
    assert rows["memory"].same
