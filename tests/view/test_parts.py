"""The viewer's pieces: turns with their events, alignment, memory diffs, chart geometry."""

from __future__ import annotations

from rapport.envs.collab import EnforcementEvent
from rapport.log import (
    ErrorEvent,
    JudgeEvent,
    MemoryItem,
    MemoryState,
    MemoryVersion,
    NoteEvent,
    RecallEvent,
    RewardEvent,
    SessionRecord,
    ToolCallEvent,
    Turn,
)
from rapport.report import CurvePoint, chart
from rapport.view._memory import item_changes, preference_rows, version_views, word_diff
from rapport.view._timeline import align, timeline


def _record(condition: str = "none", turns: int = 4, **fields: object) -> SessionRecord:
    speakers = ["user", "agent"]
    return SessionRecord.model_validate(
        {
            "condition": condition,
            "user_id": "u",
            "index": 0,
            "spec_id": "p",
            "turns": [Turn(index=i, speaker=speakers[i % 2], text=f"t{i}") for i in range(turns)],
            **fields,
        }
    )


def test_events_sit_at_their_turns_recall_before_the_message() -> None:
    record = _record(
        events=[
            RecallEvent(turn=1, text="likes tables"),
            EnforcementEvent(turn=2, preference_id="tables"),
            ToolCallEvent(turn=1, name="search", result="3 hits"),
            RewardEvent(turn=3, reward=1.0, move="[answer] 4"),
            JudgeEvent(judge="judge", dimension="clarity", score=4, evidence_turns=[1, 3]),
            NoteEvent(text="max_turns reached"),
            ErrorEvent(turn=4, where="user", message="bad JSON"),
        ]
    )
    line = timeline(record)
    by_index = {v.index: v for v in line.turns}
    assert [e.kind for e in by_index[1].before] == ["recall"]
    assert [e.kind for e in by_index[1].after] == ["tool_call"]
    assert by_index[2].kinds == {"enforcement"} and by_index[3].kinds == {"reward"}
    assert by_index[1].cited_by == by_index[3].cited_by == ["judge · clarity"]
    assert by_index[4].turn is None and by_index[4].kinds == {"error"}  # after the last turn
    assert [e.kind for e in line.session_events] == ["note"]
    assert [(label, e.dimension) for label, e in line.judges] == [("judge · clarity", "clarity")]


def test_repeated_judge_scores_are_told_apart() -> None:
    scores = [
        JudgeEvent(judge=judge, dimension="clarity", score=3 + repeat, repeat=repeat)
        for judge in ("judge", "judge2")
        for repeat in (0, 1)
    ]
    labels = [label for label, _ in timeline(_record(events=scores)).judges]
    assert labels == [
        "judge · repeat 1 · clarity",
        "judge · repeat 2 · clarity",
        "judge2 · repeat 1 · clarity",
        "judge2 · repeat 2 · clarity",
    ]


def test_side_by_side_aligns_by_turn_index() -> None:
    rows = align([_record("none", 4), _record("reflection", 2)])
    assert [r.index for r in rows] == [0, 1, 2, 3]
    assert rows[3].cells[0] is not None and rows[3].cells[1] is None


def test_memory_diff_matches_items_by_text_and_diffs_words() -> None:
    old = [MemoryItem(id="a", text="likes short answers"), MemoryItem(id="b", text="uses python")]
    new = [
        MemoryItem(id="x", text="likes very short answers"),
        MemoryItem(id="y", text="no jargon"),
    ]
    changes = item_changes(old, new)
    assert [(c.change, c.text) for c in changes] == [
        ("changed", "likes very short answers"),
        ("changed", "no jargon"),
    ]
    assert changes[0].diff is not None
    assert ("insert", "very") in changes[0].diff.pieces
    assert item_changes(old, old) == []
    assert word_diff("a b", "a b").pieces == [("equal", "a b")]


def test_versions_carry_the_enforcements_that_led_to_them() -> None:
    session = _record(events=[EnforcementEvent(turn=2, preference_id="tables")])
    versions = [
        MemoryVersion(condition="c", user_id="u", version=0),
        MemoryVersion(
            condition="c",
            user_id="u",
            version=1,
            state=MemoryState(items=[MemoryItem(id="n", text="likes tables")]),
        ),
    ]
    views = version_views(versions, {0: session})
    assert views[0].session is None and views[0].enforcements == []
    assert views[1].session == 0 and [e.preference_id for e in views[1].enforcements] == ["tables"]
    assert [c.change for c in views[1].changes] == ["added"]


def test_preference_rows_say_when_enforcement_stopped() -> None:
    first = _record(events=[EnforcementEvent(turn=2, preference_id="tables")])
    second = _record().model_copy(update={"index": 1})
    rows = preference_rows(["tables", "brevity"], [first, second], "collab")
    assert rows[0].enforced == [1, 0] and rows[0].status == "not enforced after session 1"
    assert rows[1].status == "never enforced"


def test_charts_put_sessions_on_integer_ticks_and_link_points() -> None:
    points = [CurvePoint(index=i, mean=i / 2, ci_low=0, ci_high=1, users=3) for i in range(3)]
    drawn = chart("hit", {"notes": points}, lambda c, i: f"/s/{c}/{i}")
    assert drawn is not None
    assert [t.label for t in drawn.x_ticks] == ["1", "2", "3"]
    assert [d.href for d in drawn.series[0].dots] == ["/s/notes/0", "/s/notes/1", "/s/notes/2"]
    assert chart("empty", {}, lambda c, i: "") is None
    flat = [CurvePoint(index=i, mean=0.0, ci_low=0.0, ci_high=0.0, users=2) for i in range(2)]
    zero = chart("d", {"b": flat}, lambda c, i: "", zero_line=True, colors={"b": "#123456"})
    assert zero is not None and zero.series[0].color == "#123456"
    assert "-0" not in [t.label for t in zero.y_ticks] and "0" in [t.label for t in zero.y_ticks]
