"""The simulated user never names its preference; coarsening keeps every stated value."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("bfcl_eval")

from rapport.envs.prefix import (
    GO_ON,
    PreferenceLeak,
    PrefixUserSimulator,
    coarsen,
    get_setting,
    leaked_terms,
    required_literals,
    slips_out_of_role,
    task_by_id,
)
from rapport.llm import Message, Model, ScriptedAPI

SETTING = get_setting("each_confirmation")


def test_leak_check_finds_keywords_and_the_setting_name() -> None:
    assert leaked_terms("Please CONFIRM with me first", [SETTING]) == ["confirm"]
    assert leaked_terms("each confirmation, ok?", [SETTING]) == [
        "confirmation",
        "each confirmation",
    ]
    assert leaked_terms("Move the report to temp, thanks.", [SETTING]) == []


async def test_a_leaking_reply_is_retried_with_the_words_to_avoid() -> None:
    api = ScriptedAPI(["I want you to ask permission first.", "Hmm, you changed it already?"])
    user = PrefixUserSimulator(Model(api, role="user"), [SETTING], "Move report.pdf to temp.")
    assert await user.reply([]) == "Hmm, you changed it already?"
    assert "permission" in api.requests[1].messages[-1].content


async def test_a_user_that_keeps_leaking_raises_after_the_retries() -> None:
    api = ScriptedAPI(["Please confirm."] * 3)
    user = PrefixUserSimulator(
        Model(api, role="user"), [SETTING], "Move report.pdf to temp.", retries=2
    )
    with pytest.raises(PreferenceLeak):
        await user.reply([])
    assert len(api.requests) == 3


def test_the_prompt_gives_the_cue_but_the_user_is_told_not_to_name_it() -> None:
    prompt = PrefixUserSimulator(Model(ScriptedAPI(["x"])), [SETTING], "Do X.").system_prompt()
    assert SETTING.cue in prompt and '"confirm"' in prompt and "Do X." in prompt


def test_required_literals_are_the_ground_truth_values_the_turns_state() -> None:
    literals = required_literals(task_by_id("multi_turn_base_0"))
    assert "final_report.pdf" in literals and "budget analysis" in literals
    assert "document" in literals


async def test_coarsening_retries_then_drops_a_task_that_loses_values() -> None:
    task = task_by_id("multi_turn_base_0")
    bad = json.dumps({"instruction": "Tidy my reports."})
    dropped = await coarsen(task, Model(ScriptedAPI([bad] * 3)), retries=2)
    assert dropped.instruction is None
    assert "final_report.pdf" in dropped.missing and "dropped" in dropped.reason
    good = json.dumps({"instruction": " ".join(task.turns)})
    kept = await coarsen(task, Model(ScriptedAPI([bad, good])), retries=2)
    assert kept.instruction == " ".join(task.turns)


@pytest.mark.parametrize(
    "slip",
    [
        "Sure, I'm ready! What do you need help with?",
        "The assistant ran book_flight with the specified arguments.",
        "How can I assist you today?",
        "Sure, I'll do that. What do you want to know about the market status?",
    ],
)
async def test_a_reply_out_of_role_is_retried_with_a_reminder(slip: str) -> None:
    api = ScriptedAPI([slip, "Please book my flight to Paris."])
    user = PrefixUserSimulator(Model(api, role="user"), [SETTING], "Book a flight to Paris.")
    assert await user.reply([]) == "Please book my flight to Paris."
    assert "not the assistant" in api.requests[1].messages[-1].content
    assert user.replaced == 0


async def test_a_user_that_stays_out_of_role_is_replaced_by_code() -> None:
    slip = "The assistant booked the flight."
    opening = PrefixUserSimulator(
        Model(ScriptedAPI([slip] * 3)), [SETTING], "Book a flight to Paris."
    )
    assert await opening.reply([]) == "Book a flight to Paris."
    later = PrefixUserSimulator(
        Model(ScriptedAPI([slip] * 3)), [SETTING], "Book a flight to Paris."
    )
    seen = [Message(role="assistant", content="Book it."), Message(role="user", content="Done.")]
    assert await later.reply(seen) == GO_ON
    assert opening.replaced == later.replaced == 1


def test_the_user_may_speak_of_the_assistant_as_you() -> None:
    assert not slips_out_of_role("You booked the wrong date; the assistant part is fine.")
    assert not slips_out_of_role("Thanks! That is all I needed. <END>")
    assert not slips_out_of_role("I want to know what the market status is.")
    assert slips_out_of_role("My assistant has finished the booking.")
