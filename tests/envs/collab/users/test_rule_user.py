"""The rule user: every decision is code, tested on its own."""

from __future__ import annotations

import pytest

from rapport.envs.collab import NotCheckableError, RuleUser, enforcement_lines, load_taxonomy
from rapport.llm import Message

PROBLEM = "A train travels 120 km in 2 hours. What is its average speed in km/h?"


def _extract(text: str) -> str | None:
    return "60" if "60" in text and "so" in text.lower() else None


def _user(*prefs: str, seed: str = "s") -> RuleUser:
    taxonomy = load_taxonomy("collab")
    return RuleUser(
        persona="Ada",
        problem=PROBLEM,
        preferences=[taxonomy.get(p) for p in prefs],
        extract=_extract,
        seed=seed,
    )


def _agent(text: str) -> list[Message]:
    return [Message(role="user", content="hi"), Message(role="assistant", content=text)]


async def test_opening_states_the_whole_task() -> None:
    assert PROBLEM in await _user("blunt").opening()


async def test_openings_vary_with_the_seed_and_repeat_for_one() -> None:
    openings = {await _user("blunt", seed=str(i)).opening() for i in range(12)}
    assert len(openings) > 1
    assert await _user("blunt", seed="x").opening() == await _user("blunt", seed="x").opening()


def test_only_checkable_preferences() -> None:
    with pytest.raises(NotCheckableError, match="narrative"):
        _user("narrative")


async def test_a_clarifying_question_is_answered_from_the_problem_and_never_enforced() -> None:
    reply = await _user("tldr_end", "bullet_points").react(
        _agent("Which units do you want?"), turn=1
    )
    assert PROBLEM in reply.message
    assert not reply.stop and reply.enforced == []
    assert all(not e.enforced for e in reply.events if e.kind == "preference_verdict")


async def test_a_violation_is_enforced_in_natural_words_without_naming_the_taxonomy() -> None:
    user = _user("tldr_end", "blunt", "bullet_points")
    reply = await user.react(_agent("Thanks for asking! The speed is 120 / 2 = 60."), turn=1)
    assert reply.enforced == ["tldr_end", "blunt", "bullet_points"]
    assert not reply.stop
    taxonomy = load_taxonomy("collab")
    for pref_id in reply.enforced:
        pref = taxonomy.get(pref_id)
        assert pref_id not in reply.message and pref.name not in reply.message
        assert pref.category not in reply.message.lower()
        assert pref.enforcement not in reply.message
    kinds = [e.kind for e in reply.events]
    assert kinds.count("enforcement") == 3 and kinds.count("preference_verdict") == 3


async def test_every_checkable_preference_has_several_phrasings() -> None:
    taxonomy = load_taxonomy("collab")
    for pref in taxonomy.preferences:
        if pref.checker is not None:
            assert len(set(enforcement_lines(pref.id))) >= 3, pref.id


async def test_the_draft_is_the_answer_the_agent_stated_even_while_enforcing() -> None:
    user = _user("tldr_end")
    reply = await user.react(_agent("So the speed is 60 km/h."), turn=1)
    assert reply.enforced == ["tldr_end"] and not reply.stop
    assert user.draft == "60"
    assert [e.kind for e in reply.events].count("draft_update") == 1


async def test_stops_once_an_answer_comes_in_the_preferred_form() -> None:
    user = _user("tldr_end")
    reply = await user.react(_agent("So the speed is 60 km/h.\nTL;DR: 60 km/h."), turn=3)
    assert reply.stop and reply.enforced == []
    assert user.draft == "60"


async def test_goes_on_when_nothing_is_broken_and_no_answer_yet() -> None:
    user = _user("blunt")
    reply = await user.react(_agent("First find the distance: 120 km."), turn=1)
    assert not reply.stop and reply.enforced == [] and reply.message
    assert user.draft == ""


async def test_the_same_answer_twice_is_one_draft_update() -> None:
    user = _user("tldr_end")
    await user.react(_agent("So the speed is 60."), turn=1)
    reply = await user.react(_agent("So the speed is 60, as before."), turn=3)
    assert [e.kind for e in reply.events].count("draft_update") == 0


async def test_an_answer_followed_by_a_check_in_does_not_end_the_session() -> None:
    user = _user("one_step_at_a_time")
    reply = await user.react(_agent("So the speed is 120 / 2 = 60. Does that make sense?"), turn=1)
    assert not reply.stop and reply.enforced == []
    assert user.draft == "60"
