"""Deterministic alignment of interaction-tool calls with a setting's pattern."""

from __future__ import annotations

from rapport.envs.prefix import Step, align, all_settings, get_setting
from rapport.envs.prefix._transcript import render_for_judge
from rapport.log import Turn


def _sys(name: str, *, wrote: bool = False, failed: bool = False) -> Step:
    return Step(name=name, interaction=False, wrote=wrote, failed=failed)


def _ix(name: str) -> Step:
    return Step(name=name, interaction=True)


def test_the_taxonomy_has_31_settings_over_14_attributes_in_4_dimensions() -> None:
    settings = all_settings()
    assert len(settings) == 31
    assert len({s.attribute for s in settings}) == 14
    assert len({s.dimension for s in settings}) == 4


def test_confirming_every_write_is_fully_aligned() -> None:
    timeline = [
        _sys("ls"),
        _ix("confirmation"),
        _sys("mkdir", wrote=True),
        _ix("confirmation"),
        _sys("mv", wrote=True),
    ]
    result = align(get_setting("confirm_each_write"), timeline)
    assert (result.precision, result.recall) == (1.0, 1.0)


def test_a_missing_confirmation_lowers_recall_and_a_misplaced_one_precision() -> None:
    timeline = [_ix("confirmation"), _sys("ls"), _sys("mkdir", wrote=True), _sys("mv", wrote=True)]
    result = align(get_setting("confirm_each_write"), timeline)
    assert result.recall == 0.0
    assert result.precision == 0.0


def test_a_never_rule_penalizes_only_its_tool() -> None:
    timeline = [_ix("confirmation"), _sys("mkdir", wrote=True), _ix("failure_notice")]
    result = align(get_setting("no_confirmation"), timeline)
    assert result.recall is None  # a never rule opens no slot
    assert result.precision == 0.0
    quiet = align(get_setting("no_confirmation"), [_sys("mkdir", wrote=True)])
    assert (quiet.precision, quiet.recall) == (1.0, None)


def test_recall_is_undefined_when_nothing_the_pattern_asks_about_happened() -> None:
    reads_only = [_sys("ls"), _sys("cat")]
    assert align(get_setting("confirm_each_write"), reads_only).recall is None


def test_failure_rules_look_after_the_failed_call() -> None:
    timeline = [
        _sys("mkdir", failed=True),
        _ix("failure_notice"),
        _ix("failure_logic"),
        _sys("mkdir", wrote=True),
    ]
    result = align(get_setting("explain_failures"), timeline)
    assert (result.precision, result.recall) == (1.0, 1.0)


def test_long_transcripts_keep_the_start_and_end_and_only_shown_turns_can_be_cited() -> None:
    turns = [Turn(index=i, speaker="user", text=f"message {i} " + "x" * 80) for i in range(100)]
    text, shown = render_for_judge(turns, [get_setting("announce_tools")], "Do X.", max_chars=2000)
    assert {0, 1, 2, 3, 99} <= shown and 50 not in shown
    assert "turns omitted" in text and "[99] user" in text and "[50] user" not in text
    short, all_ids = render_for_judge(turns[:3], [get_setting("announce_tools")], "Do X.")
    assert all_ids == {0, 1, 2} and "omitted" not in short
