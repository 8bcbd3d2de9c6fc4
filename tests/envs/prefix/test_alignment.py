"""Deterministic alignment of interaction-tool calls with a setting's pattern."""

from __future__ import annotations

from rapport.envs.prefix import (
    PrefixOptions,
    Step,
    align,
    all_settings,
    extra_settings,
    get_setting,
)
from rapport.envs.prefix._transcript import render_for_judge
from rapport.log import Turn


def _sys(name: str, *, wrote: bool = False, failed: bool = False) -> Step:
    return Step(name=name, interaction=False, wrote=wrote, failed=failed)


def _ix(name: str, function: str | None = None, params: list[str] | None = None) -> Step:
    return Step(name=name, interaction=True, function=function, params=params)


PAPER_31 = {
    "transparency": {
        "tool_transparency": {"tool_low", "tool_medium", "tool_high"},
        "parameter_transparency": {"param_low", "param_medium", "param_high"},
        "source_transparency": {"source_high", "source_low"},
    },
    "pace": {
        "confirmation": {"each_confirmation", "confirmation_batch", "silent"},
        "presentation": {"presentation_compact", "presentation_layered"},
        "info_collection": {"info_collect_gradual", "info_collect_upfront"},
        "disambiguation": {"disambiguation_gradual", "disambiguation_upfront"},
        "chain_execution": {"chain_parallel", "chain_sequential"},
    },
    "strategy": {
        "initiative": {"tool_initiative_proactive", "tool_initiative_reactive"},
        "tool_invocation": {"tool_invocation_single", "tool_invocation_multiple"},
    },
    "robustness": {
        "tool_abortion": {"tool_abortion_stop", "tool_abortion_continue"},
        "tool_switching": {"tool_switch_high_agency", "tool_switch_low_agency"},
        "error_retry": {"error_retry_silent", "error_retry_escalation"},
        "error_discovery": {"error_discovery_brief", "error_discovery_detail"},
    },
}


def test_the_taxonomy_is_the_papers_31_settings_over_14_attributes_in_4_dimensions() -> None:
    settings = all_settings()
    assert len(settings) == 31
    assert len({s.attribute for s in settings}) == 14
    assert len({s.dimension for s in settings}) == 4
    ours = {
        dim: {
            attr: {s.id for s in settings if s.dimension == dim and s.attribute == attr}
            for attr in {s.attribute for s in settings if s.dimension == dim}
        }
        for dim in {s.dimension for s in settings}
    }
    assert ours == PAPER_31


def test_our_extras_stay_outside_the_31_and_run_only_when_named() -> None:
    extras = {s.id for s in extra_settings()}
    assert extras == {"best_guess", "infer_defaults", "verify_before_acting"}
    assert not extras & {s.id for s in all_settings()}
    assert PrefixOptions().settings == [s.id for s in all_settings()]
    assert PrefixOptions.model_validate({"settings": "extras"}).settings == sorted(extras)
    assert get_setting("best_guess").extra


def test_confirming_every_write_is_fully_aligned() -> None:
    timeline = [
        _sys("ls"),
        _ix("confirmation"),
        _sys("mkdir", wrote=True),
        _ix("confirmation"),
        _sys("mv", wrote=True),
    ]
    result = align(get_setting("tool_initiative_reactive"), timeline)
    assert (result.precision, result.recall) == (1.0, 1.0)


def test_confirming_every_call_needs_a_confirmation_naming_each_function() -> None:
    timeline = [
        _ix("confirmation", "ls"),
        _sys("ls"),
        _ix("confirmation", "mkdir"),
        _sys("mkdir", wrote=True),
        _ix("confirmation", "ls"),  # names the wrong function: fills nothing
        _sys("mv", wrote=True),
    ]
    result = align(get_setting("each_confirmation"), timeline)
    assert result.recall == 2 / 3 and result.precision == 2 / 3


def test_displayed_params_must_list_every_argument_of_the_call() -> None:
    call = Step(name="mv", interaction=False, wrote=True, params=["destination", "source"])
    full = _ix("display_params", "mv", ["source", "destination"])
    part = _ix("display_params", "mv", ["source"])
    assert align(get_setting("param_medium"), [full, call]).recall == 1.0
    assert align(get_setting("param_medium"), [part, call]).recall == 0.0


def test_gradual_and_upfront_questions_differ_by_where_they_come() -> None:
    upfront = [_ix("information_seeking"), _sys("ls"), _sys("mv", wrote=True)]
    gradual = [_sys("ls"), _ix("information_seeking"), _sys("mv"), _ix("information_seeking")]
    assert align(get_setting("info_collect_upfront"), upfront).recall == 1.0
    assert align(get_setting("info_collect_upfront"), gradual).precision == 0.0
    result = align(get_setting("info_collect_gradual"), gradual)
    assert (result.precision, result.recall) == (1.0, 1.0)
    assert align(get_setting("info_collect_gradual"), upfront).recall == 0.0


def test_a_parallel_chain_runs_calls_in_one_reply_and_reports_after_them() -> None:
    together = [
        Step(name="ls", interaction=False, reply=1),
        Step(name="cat", interaction=False, reply=1),
        Step(name="sequential_output", interaction=True, reply=2),
    ]
    one_by_one = [
        Step(name="ls", interaction=False, reply=1),
        Step(name="sequential_output", interaction=True, reply=2),
        Step(name="cat", interaction=False, reply=3),
    ]
    assert align(get_setting("chain_parallel"), together).recall == 1.0
    assert align(get_setting("chain_parallel"), one_by_one).recall == 0.0


def test_a_missing_confirmation_lowers_recall_and_a_misplaced_one_precision() -> None:
    timeline = [_ix("confirmation"), _sys("ls"), _sys("mkdir", wrote=True), _sys("mv", wrote=True)]
    result = align(get_setting("tool_initiative_reactive"), timeline)
    assert result.recall == 0.0
    assert result.precision == 0.0


def test_a_never_rule_penalizes_only_its_tool() -> None:
    timeline = [_ix("confirmation"), _sys("mkdir", wrote=True), _ix("failure_notice")]
    result = align(get_setting("silent"), timeline)
    assert result.recall is None  # a never rule opens no slot
    assert result.precision == 0.0
    quiet = align(get_setting("silent"), [_sys("mkdir", wrote=True)])
    assert (quiet.precision, quiet.recall) == (1.0, None)


def test_recall_is_undefined_when_nothing_the_pattern_asks_about_happened() -> None:
    reads_only = [_sys("ls"), _sys("cat")]
    assert align(get_setting("tool_initiative_reactive"), reads_only).recall is None


def test_failure_rules_look_after_the_failed_call() -> None:
    timeline = [
        _sys("mkdir", failed=True),
        _ix("failure_notice", "mkdir"),
        _ix("failure_logic", "mkdir"),
        _sys("mkdir", wrote=True),
    ]
    result = align(get_setting("error_discovery_detail"), timeline)
    assert (result.precision, result.recall) == (1.0, 1.0)


def test_long_transcripts_keep_the_start_and_end_and_only_shown_turns_can_be_cited() -> None:
    turns = [Turn(index=i, speaker="user", text=f"message {i} " + "x" * 80) for i in range(100)]
    text, shown = render_for_judge(turns, [get_setting("tool_medium")], "Do X.", max_chars=2000)
    assert {0, 1, 2, 3, 99} <= shown and 50 not in shown
    assert "turns omitted" in text and "[99] user" in text and "[50] user" not in text
    short, all_ids = render_for_judge(turns[:3], [get_setting("tool_medium")], "Do X.")
    assert all_ids == {0, 1, 2} and "omitted" not in short


def test_the_docs_table_lists_each_of_the_31_with_its_attribute_and_dimension() -> None:
    from pathlib import Path

    docs = (Path(__file__).parents[3] / "docs" / "prefix.md").read_text(encoding="utf-8")
    for setting in all_settings():
        row = f"| `{setting.id}` | {setting.attribute} | {setting.dimension} | {setting.definition}"
        assert row in docs, setting.id


def test_every_settings_pattern_can_be_told_to_the_judges() -> None:
    from rapport.envs.prefix import extra_settings
    from rapport.envs.prefix._transcript import expected_pattern

    for setting in [*all_settings(), *extra_settings()]:
        assert expected_pattern(setting)
