"""The study design file: what is accepted, what is refused (one line), and how
participants are assigned."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest
import yaml

from rapport.envs.study import (
    DesignError,
    StudyBenchmark,
    StudyOptions,
    StudyOutcome,
    StudyTask,
    assign,
    free_text_table,
    load_design,
    memory_difference_table,
    preference_card,
    shipped_problems,
    survey_table,
)
from rapport.log import SessionRecord, Turn

EXAMPLE = Path(__file__).parents[3] / "docs" / "study-design.yaml"


def _write(tmp_path: Path, change: dict[str, object]) -> Path:
    data = yaml.safe_load(EXAMPLE.read_text())
    data.update(change)
    path = tmp_path / "design.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


def test_the_example_design_loads_with_the_papers_two_study_types() -> None:
    design = load_design(EXAMPLE)
    assert [t.id for t in design.study_types] == ["coding", "mixed"]
    assert design.conditions == ["none", "reflection"]
    bank = design.problem_bank()
    kinds = {bank[p].kind for t in design.study_types for s in t.problem_sets for p in s}
    assert {"debugging", "implementation", "object-oriented design"} <= kinds
    assert {"creative writing", "word problem", "code task"} <= kinds


def test_every_shipped_problem_is_complete() -> None:
    problems = shipped_problems()
    assert len(problems) >= 12
    assert all(p.text.strip() and p.title.strip() for p in problems.values())


SETS = [
    ["coding-debug-1", "coding-impl-1", "coding-ood-1"],
    ["coding-debug-2", "coding-impl-2", "coding-ood-2"],
]


def _type(preferences: list[str], sets: list[list[str]] = SETS[:1]) -> dict[str, object]:
    return {"study_types": [{"id": "c", "name": "C", "preferences": preferences,
                             "problem_sets": sets}]}  # fmt: skip


def _one(**fields: object) -> dict[str, object]:
    """A design with one study type: coding problems and these fields."""
    return {"study_types": [{"id": "c", "name": "C", "problem_sets": SETS[:1], **fields}]}


@pytest.mark.parametrize(
    ("change", "says"),
    [
        ({"colour": "blue"}, "colour: Extra inputs are not permitted"),
        ({"conditions": ["none", "none"]}, "each memory may appear once"),
        ({"conditions": ["none"]}, "conditions: List should have at least 2 items"),
        (_type(["direct"], [["coding-debug-1"]]), "holds 3 problems"),
        (_type(["direct"], [[*SETS[0][:2], "nope"]]), "unknown problem 'nope'"),
        (_type(["direct"], SETS), "blocks all takes 1 problem set per study type, got 2"),
        (
            {"blocks": "one_type", **_type(["direct"])},
            "blocks one_type takes 2 problem sets per study type, got 1",
        ),
        ({"blocks": "some"}, "blocks: Input should be 'all' or 'one_type'"),
        (_type(["direct", "narrative"]), "the preferences conflict"),
        (_type(["telepathy"]), "unknown preference 'telepathy'"),
        (_type(["camel_case_names"]), "'camel_case_names' is a coding one, not of granularity"),
        (_one(granularity="domain", preferences=["direct"]), "'direct' is a general one"),
        (
            _one(granularity="domain", preferences=["camel_case_names", "snake_case_names"]),
            "the preferences conflict",
        ),
        (
            _one(
                granularity="domain",
                preferences=["code_alternatives"],
                problem_sets=[["mixed-writing-1", *SETS[0][1:]]],
            ),
            "needs the problems of one domain, not coding, writing",
        ),
        (
            _one(
                granularity="domain",
                preferences=["code_alternatives"],
                problem_sets=[["mixed-maths-1", "mixed-maths-2", "mixed-maths-1"]],
            ),
            "no maths preferences for granularity domain",
        ),
        (
            _one(granularity="domain", draw_preferences=6),
            "cannot draw 6 preferences from 5 categories of granularity domain",
        ),
        (_one(granularity="fine", preferences=["direct"]), "Input should be 'general' or 'domain'"),
    ],
)
def test_a_bad_design_is_refused_in_one_line(
    tmp_path: Path, change: dict[str, object], says: str
) -> None:
    with pytest.raises(DesignError) as caught:
        load_design(_write(tmp_path, change))
    message = str(caught.value)
    assert says in message
    assert "\n" not in message and message.startswith(str(tmp_path))


def test_unreadable_and_non_mapping_files_are_refused(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("title: [unclosed")
    with pytest.raises(DesignError, match="not valid YAML"):
        load_design(bad)
    bad.write_text("- a list\n")
    with pytest.raises(DesignError, match="is a mapping"):
        load_design(bad)
    with pytest.raises(DesignError, match="cannot read"):
        load_design(tmp_path / "missing.yaml")


SCOPED = ["code_sketch_first", "code_alternatives", "justify_dependencies", "camel_case_names"]
MIXED = ["outline_first", "approaches_then_ask"]


def test_by_default_everyone_does_every_type_under_every_condition() -> None:
    design = load_design(EXAMPLE)
    assert design.blocks == "all"
    people = assign(design, 8)
    orders = Counter((tuple(a.study_types), tuple(a.order)) for a in people)
    assert len(orders) == 4 and set(orders.values()) == {2}
    for a in people:
        blocks = [(b.study_type, b.condition) for b in a.blocks]
        assert blocks == [(t, c) for t in a.study_types for c in a.order]
        assert a.preferences == {"coding": SCOPED, "mixed": MIXED}
        for t in design.study_types:
            mine = [b for b in a.blocks if b.study_type == t.id]
            assert [b.problems for b in mine] == [t.problem_sets[0]] * 2
            # a type's sessions have the same run-store indices under each condition
            assert {b.first for b in mine} == {3 * design.study_types.index(t)}


def test_one_type_gives_each_participant_one_type_and_a_set_per_block(tmp_path: Path) -> None:
    data = yaml.safe_load(EXAMPLE.read_text())
    data["blocks"] = "one_type"
    for t in data["study_types"]:
        t["problem_sets"].append([p.replace("-1", "-2") for p in t["problem_sets"][0]])
    path = tmp_path / "design.yaml"
    path.write_text(yaml.safe_dump(data))
    design = load_design(path)
    people = assign(design, 8)
    pairs = Counter((tuple(a.study_types), tuple(a.order)) for a in people)
    assert len(pairs) == 4 and set(pairs.values()) == {2}
    for a in people:
        (kind,) = a.study_types
        t = design.study_type(kind)
        assert [b.condition for b in a.blocks] == a.order
        assert [b.problems for b in a.blocks] == t.problem_sets
        assert [b.first for b in a.blocks] == [0, 0]
        assert a.preferences == {kind: SCOPED if kind == "coding" else MIXED}


def test_the_benchmark_numbers_a_conditions_sessions_over_its_blocks() -> None:
    design = load_design(EXAMPLE)
    benchmark = StudyBenchmark(StudyOptions(design=design, assignments=assign(design, 2)))
    for participant in ("p01", "p02"):
        specs = benchmark.block_sessions(participant, "reflection")
        assert [s.index for s in specs] == list(range(6))
        tasks = [s.task_as(StudyTask) for s in specs]
        assert [t.study_type for t in tasks] == ["coding"] * 3 + ["mixed"] * 3
        assert tasks[0].preferences == SCOPED and tasks[3].preferences == MIXED
    # p02 meets mixed first: its mixed blocks come before its coding ones
    mixed_block = benchmark.block_sessions("p02", "none")[3].task_as(StudyTask).block
    assert mixed_block == 0


def test_the_example_has_the_papers_two_granularities() -> None:
    design = load_design(EXAMPLE)
    cards = {t.id: preference_card(t.preferences) for t in design.study_types}
    assert [t.granularity for t in design.study_types] == ["domain", "general"]
    assert [p.name for p in cards["coding"]][-1] == "camelCase names"
    assert [p.name for p in cards["mixed"]] == [
        "Outline first",
        "Several approaches, then your choice",
    ]
    # the mixed study's second preference asks which direction to take, as the app's does
    assert "asked which one to follow" in cards["mixed"][1].description


def test_drawn_preferences_come_from_the_types_granularity(tmp_path: Path) -> None:
    design = load_design(_write(tmp_path, _one(granularity="domain", draw_preferences=4)))
    people = assign(design, 6)
    coding = {p.id for p in design.preference_pool(design.study_types[0]).preferences}
    drawn = [a.preferences["c"] for a in people]
    assert all(len(d) == 4 and set(d) <= coding for d in drawn)
    assert all({"camel_case_names", "snake_case_names"} - set(d) for d in drawn)
    assert len({tuple(d) for d in drawn}) > 1


def test_a_session_scores_its_length_and_survey() -> None:
    record = SessionRecord(
        condition="reflection",
        user_id="p01",
        index=0,
        spec_id="coding-debug-1",
        turns=[
            Turn(index=i, speaker="user" if i % 2 == 0 else "agent", text="x") for i in range(4)
        ],
        outcome=StudyOutcome(
            study_type="coding",
            problem_id="coding-debug-1",
            domain="coding",
            problem_kind="debugging",
            block=1,
            ratings={"adherence": 5, "memory": 4, "confidence": 2, "satisfaction": 3},
            impact="followed_helped",
            feedback="fine",
        ),
    )
    design = load_design(EXAMPLE)
    benchmark = StudyBenchmark(StudyOptions(design=design, assignments=assign(design, 2)))
    scores = benchmark.score(record)
    assert scores == {
        "length": 4.0,
        "adherence": 5.0,
        "memory": 4.0,
        "confidence": 2.0,
        "satisfaction": 3.0,
    }


def _rated(condition: str, user: str, index: int, study_type: str, rating: int) -> SessionRecord:
    return SessionRecord(
        condition=condition,
        user_id=user,
        index=index,
        spec_id=f"{study_type}-{index}",
        scores={"length": 2.0, "adherence": float(rating)},
        outcome=StudyOutcome(
            study_type=study_type,
            problem_id=f"{study_type}-{index}",
            domain="coding",
            problem_kind="debugging",
            block=0,
            ratings={"adherence": rating},
            feedback=f"{study_type} {rating}",
        ),
    )


def test_the_tables_keep_study_types_apart_at_the_same_session_index() -> None:
    # one_type: p01 does coding, p02 mixed, both at index 0 of each condition
    records = [
        _rated("none", "p01", 0, "coding", 2),
        _rated("reflection", "p01", 0, "coding", 5),
        _rated("none", "p02", 0, "mixed", 4),
        _rated("reflection", "p02", 0, "mixed", 3),
    ]
    survey = survey_table(records)
    assert [r[:4] for r in survey.rows] == [
        ["none", "coding", 1, 1],
        ["none", "mixed", 1, 1],
        ["reflection", "coding", 1, 1],
        ["reflection", "mixed", 1, 1],
    ]
    (diff,) = memory_difference_table(records)
    adherence = diff.columns.index("adherence")
    assert [(r[1], r[2], r[3], r[adherence]) for r in diff.rows] == [
        ("coding", 1, 1, "3.00 [-]"),
        ("mixed", 1, 1, "-1.00 [-]"),
    ]
    free = free_text_table(records)
    assert [r[1:3] + r[4:] for r in free.rows][:2] == [
        ["coding", 1, "coding 2", "-"],
        ["mixed", 1, "mixed 4", "-"],
    ]
