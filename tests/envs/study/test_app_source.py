"""The authors' user-study app as a source of problems, preference wordings and initial
notes, read from a checkout (here a small one written for the test, in the app's layout)."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from rapport.cli import main
from rapport.envs.study import (
    DesignError,
    StudyOptions,
    apply_app,
    load_design,
    preference_card,
    read_app,
)
from rapport.store import RunStore
from rapport.study import create_study

EXAMPLE = Path(__file__).parents[3] / "docs" / "study-design.yaml"
APP = '''
import streamlit as st

CODING_PREFERENCES = [
    "Show a sketch first.",
    "Name two ways to do it.",
    "Say why each import is there.",
    "Use camelCase names.",
]
CODING_PROBLEMS = [
    {"id": "p1", "title": "Session 1", "description": """Fix the loop below.

```python
total = 0
```
"""},
    {"id": "p2", "title": "Session 2", "description": "Write a function that counts words."},
    {"id": "p3", "title": "Session 3", "description": "Design classes for a parking lot."},
]
MIXED_PREFERENCES = [
    "Give a plan first.",
    "Offer ways to go, then ask which one I want.",
]
MIXED_PROBLEMS = [
    {"id": "p1", "title": "Session 1", "description": "Give this story an ending."},
    {"id": "p2", "title": "Session 2", "description": "How many ways to seat 3 people?"},
    {"id": "p3", "title": "Session 3", "description": "Write a function that sorts names."},
]


def on_submit(agent):
    return agent.update_agent_notes("Nothing learned so far.", [])
'''


@pytest.fixture
def checkout(tmp_path: Path) -> Path:
    root = tmp_path / "human-study"
    root.mkdir()
    (root / "full_human_study.py").write_text(APP)
    return root


def test_the_apps_problems_preferences_and_initial_notes_are_read(checkout: Path) -> None:
    app = read_app(checkout)
    coding = app.studies["coding"]
    assert [p.id for p in coding.problems] == ["app-coding-1", "app-coding-2", "app-coding-3"]
    assert [p.kind for p in coding.problems] == [
        "debugging",
        "implementation",
        "object-oriented design",
    ]
    assert coding.problems[0].text.startswith("Fix the loop below.\n\n```python")
    assert [p.domain for p in app.studies["mixed"].problems] == ["writing", "maths", "coding"]
    assert app.studies["mixed"].preferences[1] == "Offer ways to go, then ask which one I want."
    assert app.initial_notes == "Nothing learned so far."


def test_a_design_takes_them_for_its_app_studies(checkout: Path) -> None:
    design = apply_app(load_design(EXAMPLE), read_app(checkout))
    bank = design.problem_bank()
    coding = design.study_type("coding")
    assert coding.problem_sets == [["app-coding-1", "app-coding-2", "app-coding-3"]]
    assert bank["app-mixed-2"].text == "How many ways to seat 3 people?"
    card = preference_card(coding.preferences, coding.preference_texts)
    assert [p.description for p in card] == [
        "Show a sketch first.",
        "Name two ways to do it.",
        "Say why each import is there.",
        "Use camelCase names.",
    ]
    assert design.memory_options["reflection"]["initial_notes"] == "Nothing learned so far."
    assert design.problems_from is not None


@pytest.mark.parametrize(
    ("content", "says"),
    [
        (None, "cannot read"),
        ("CODING_PROBLEMS = []\n", "no list of 3 in CODING_PROBLEMS"),
        (APP.replace("update_agent_notes", "rewrite"), "no update_agent_notes call"),
        ("def (", "not Python"),
    ],
)
def test_a_checkout_that_is_not_the_app_is_refused_with_one_line(
    tmp_path: Path, content: str | None, says: str
) -> None:
    if content is not None:
        (tmp_path / "full_human_study.py").write_text(content)
    with pytest.raises(DesignError, match=says) as caught:
        read_app(tmp_path)
    assert "\n" not in str(caught.value)


def test_create_with_problems_from_stores_what_the_study_plays(
    checkout: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "study"
    code = main(
        ["study", "create", str(EXAMPLE), "--participants", "2", "--out", str(out),
         "--model", "all=scripted/auto", "--problems-from", str(checkout)]
    )  # fmt: skip
    assert code == 0, capsys.readouterr().err
    with RunStore.open_readonly(out) as store:
        config = store.run().config
    options = StudyOptions.model_validate(config.options)
    assert options.design.study_type("mixed").problem_sets == [
        ["app-mixed-1", "app-mixed-2", "app-mixed-3"]
    ]
    assert config.memory_options["reflection"] == {
        "form": "msc",
        "select": False,
        "initial_notes": "Nothing learned so far.",
    }


def test_without_a_checkout_the_study_plays_its_own(tmp_path: Path) -> None:
    made = create_study(EXAMPLE, 1, tmp_path / "study", models={"all": "scripted/auto"})
    with RunStore.open_readonly(made.study_dir) as store:
        config = store.run().config
    design = StudyOptions.model_validate(config.options).design
    assert design.problems_from is None
    assert design.study_type("coding").problem_sets == [
        ["coding-debug-1", "coding-impl-1", "coding-ood-1"]
    ]


def _design(tmp_path: Path, **change: object) -> Path:
    data = yaml.safe_load(EXAMPLE.read_text())
    data.update(change)
    path = tmp_path / "design.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


def test_a_design_sets_memory_options_over_the_studys(tmp_path: Path) -> None:
    path = _design(tmp_path, memory_options={"reflection": {"select": True}})
    made = create_study(path, 1, tmp_path / "study", models={"all": "scripted/auto"})
    with RunStore.open_readonly(made.study_dir) as store:
        options = store.run().config.memory_options["reflection"]
    assert options["select"] is True and options["form"] == "msc"


@pytest.mark.parametrize(
    ("memory_options", "says"),
    [
        ({"rag": {"k": 3}}, "memory_options: 'rag' is not one of the conditions"),
        ({"reflection": {"colour": 1}}, "memory_options.reflection: .*colour"),
    ],
)
def test_memory_options_a_study_cannot_use_are_refused(
    tmp_path: Path, memory_options: dict[str, object], says: str
) -> None:
    path = _design(tmp_path, memory_options=memory_options)
    with pytest.raises(DesignError, match=says):
        create_study(path, 1, tmp_path / "study", models={"all": "scripted/auto"})
    assert not (tmp_path / "study").exists()
