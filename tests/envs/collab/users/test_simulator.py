"""The user simulator: the model reasons, code rules decide."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rapport.envs.collab import (
    CollabUserSimulator,
    UserReaction,
    decide_preferences,
    load_taxonomy,
    pastes,
    vague_opening,
)
from rapport.llm import Message, ModelRoles, ScriptedAPI
from rapport.log import UserGuardEvent

PROBLEM = "A tank holds 40 litres and leaks 2 litres per hour. After how many hours is it empty?"
PROSE = "It loses 2 litres each hour, so 40 / 2 = 20 hours."
BULLETS = "- 40 litres\n- 2 litres per hour\n- 40 / 2 = 20 hours"


def _prefs(*ids: str) -> list:
    taxonomy = load_taxonomy("collab")
    return [taxonomy.get(i) for i in ids]


def _simulator(replies: list[str], *ids: str) -> CollabUserSimulator:
    model = ModelRoles({"all": ScriptedAPI(replies)}).get("user")
    return CollabUserSimulator(
        model, persona="Sam, a baker.", problem=PROBLEM, preferences=_prefs(*ids)
    )


def _reaction(**fields: object) -> str:
    base: dict[str, object] = {
        "preferences": [],
        "enforce": False,
        "update_draft": False,
        "draft": "",
        "stop": False,
        "message": "ok",
    }
    return json.dumps(base | fields)


def test_pasted_problem_is_replaced_by_a_partial_quote() -> None:
    opening = vague_opening(f"Please solve: {PROBLEM}", PROBLEM)
    assert PROBLEM not in opening
    assert opening.startswith("Hi, I am stuck") and "A tank holds" in opening
    nearly = PROBLEM.replace("After how many", "How many")
    assert vague_opening(f"Help! {nearly}", PROBLEM).startswith("Hi, I am stuck")
    assert vague_opening("I have a leaking-tank question.", PROBLEM) == (
        "I have a leaking-tank question."
    )


def test_pasting_the_question_without_its_options_counts_as_pasting() -> None:
    question = "Ann, Bo and Cy ran a race. Ann beat Bo. Cy was last. Who came second?"
    problem = f"{question}\n\nA. Ann\nB. Bo\nC. Cy"
    opening = vague_opening(f"Hi, I am Sam. {question}", problem)
    assert question not in opening and "A. Ann" not in opening


async def test_opening_never_pastes_the_whole_problem() -> None:
    sim = _simulator([PROBLEM], "blunt")
    assert PROBLEM not in await sim.opening()


def test_checker_verdict_overrides_the_model() -> None:
    reaction = UserReaction.model_validate_json(
        _reaction(preferences=[{"preference_id": "bullet_points", "satisfied": True}])
    )
    decision = decide_preferences(reaction, _prefs("bullet_points"), PROSE, turn=2)
    [verdict] = decision.verdicts
    assert (verdict.model_satisfied, verdict.checker_satisfied, verdict.enforced) == (
        True,
        False,
        True,
    )
    assert [p.id for p in decision.violated] == ["bullet_points"]


def test_model_decides_preferences_code_cannot_check() -> None:
    reaction = UserReaction.model_validate_json(
        _reaction(preferences=[{"preference_id": "stepwise_derivation", "satisfied": False}])
    )
    decision = decide_preferences(reaction, _prefs("stepwise_derivation"), BULLETS, turn=2)
    assert decision.verdicts[0].checker_satisfied is None
    assert [p.id for p in decision.violated] == ["stepwise_derivation"]


async def test_enforcing_reply_states_the_preference_and_keeps_the_draft() -> None:
    sim = _simulator(
        [_reaction(update_draft=True, draft="20", stop=True, message="Thanks")], "bullet_points"
    )
    reply = await sim.react([Message(role="assistant", content=PROSE)], turn=3)
    assert reply.enforced == ["bullet_points"] and not reply.stop
    assert load_taxonomy("collab").get("bullet_points").name in reply.message
    assert sim.draft == ""


async def test_user_without_preferences_updates_draft_and_stops() -> None:
    sim = _simulator(
        [_reaction(update_draft=True, draft="20", stop=True, message="Great [[DONE]]")]
    )
    reply = await sim.react([Message(role="assistant", content=PROSE)], turn=3)
    assert reply.stop and reply.message == "Great" and sim.draft == "20"
    assert [e.kind for e in reply.events] == ["draft_update"]


async def test_user_does_not_stop_without_a_draft() -> None:
    sim = _simulator([_reaction(stop=True, message="[[DONE]]")])
    reply = await sim.react([Message(role="assistant", content=PROSE)], turn=3)
    assert not reply.stop and reply.message


@settings(max_examples=50, deadline=None)
@given(
    words=st.lists(
        st.text(alphabet="abcdefgh", min_size=1, max_size=6), min_size=4, max_size=30, unique=True
    ),
    lead=st.text(alphabet="xyz ", max_size=20),
)
def test_an_opening_that_pastes_the_problem_is_always_replaced(words: list[str], lead: str) -> None:
    problem = " ".join(words)
    assert pastes(f"{lead} {problem}", problem)
    assert not pastes(vague_opening(f"{lead} {problem}", problem), problem)


async def test_asked_for_the_problem_the_user_gives_it_once() -> None:
    ask = Message(role="assistant", content="Sure! Please share the problem statement.")
    sim = _simulator([_reaction(message="Thank you so much!"), _reaction(message="Thanks.")])
    reply = await sim.react([Message(role="user", content="Help with a tank?"), ask], turn=2)
    assert reply.message.startswith("Thank you so much!") and PROBLEM in reply.message
    shared = [Message(role="user", content=reply.message)]
    again = await sim.react([*shared, ask], turn=4)
    assert PROBLEM not in again.message  # already shared: not repeated


async def test_a_user_that_repeats_the_agent_is_answered_for_by_code() -> None:
    sim = _simulator(
        [_reaction(update_draft=True, draft="20", message=PROSE), _reaction(message=PROSE)]
    )
    reply = await sim.react([Message(role="assistant", content=PROSE)], turn=3)
    assert reply.stop and PROSE not in reply.message and sim.draft == "20"
    fresh = _simulator([_reaction(message=PROSE)])
    reply = await fresh.react([Message(role="assistant", content=PROSE)], turn=3)
    assert not reply.stop and PROSE not in reply.message


def test_an_opening_in_the_assistants_voice_is_replaced() -> None:
    slip = "Hi, Sam! I'm here to help you solve this problem. Please tell me more about it."
    opening = vague_opening(slip, PROBLEM)
    assert opening.startswith("Hi, I am stuck") and "here to help" not in opening
    asking = "Could you help me with a question about a leaking tank?"
    assert vague_opening(asking, PROBLEM) == asking


async def test_a_reply_offering_help_is_answered_for_by_code() -> None:
    offer = "Sure! How can I assist you with your problem today?"
    sim = _simulator([_reaction(message=offer)])
    reply = await sim.react([Message(role="assistant", content="Here is a first step.")], turn=1)
    assert "assist you" not in reply.message and not reply.stop


@pytest.mark.parametrize(
    "slip",
    [
        "Hello, Callum! I'm ready to help you with your argument. What problem is it about?",
        "Sure, I can help you with that. What is the problem?",
        "How can I assist with your maths today?",
    ],
)
def test_openings_that_offer_help_are_replaced(slip: str) -> None:
    assert vague_opening(slip, PROBLEM).startswith("Hi, I am stuck")


def _model_user(replies: list[str], *ids: str, **kwargs: object) -> CollabUserSimulator:
    model = ModelRoles({"all": ScriptedAPI(replies)}).get("user")
    return CollabUserSimulator(
        model, persona="Sam, a baker.", problem=PROBLEM, preferences=_prefs(*ids), **kwargs
    )


def _history(text: str) -> list[Message]:
    return [Message(role="user", content="hi"), Message(role="assistant", content=text)]


async def test_code_decides_the_enforcement_and_the_model_words_it() -> None:
    own = "Could you give me that as bullets? I skim everything."
    sim = _model_user([_reaction(), own], "bullet_points", enforce_with="model")
    reply = await sim.react(_history(PROSE), turn=1)
    assert reply.enforced == ["bullet_points"] and reply.message == own
    assert not [e for e in reply.events if isinstance(e, UserGuardEvent)]


@pytest.mark.parametrize(
    "worded",
    [
        # pastes the criterion
        'The substance of the reply is laid out as a bulleted list (lines starting with "-").',
        "How can I help you today?",  # a role slip
        "Lovely weather for baking bread today.",  # off the point
    ],
)
async def test_a_bad_model_wording_is_replaced_by_everyday_words(worded: str) -> None:
    sim = _model_user([_reaction(), worded], "bullet_points", enforce_with="model")
    reply = await sim.react(_history(PROSE), turn=1)
    assert reply.message != worded and "bullet" in reply.message.lower()
    guards = [e for e in reply.events if isinstance(e, UserGuardEvent)]
    assert len(guards) == 1 and guards[0].reason
    pref = _prefs("bullet_points")[0]
    assert pref.enforcement not in reply.message and pref.name not in reply.message


async def test_with_an_extractor_the_model_only_accepts_the_stated_answer() -> None:
    accept = _reaction(update_draft=True, draft="999", stop=True, message="Thanks!")
    sim = _model_user([accept], extract=lambda text: "20" if "20" in text else None)
    reply = await sim.react(_history(PROSE), turn=1)
    assert sim.draft == "20" and reply.stop
    reject = _reaction(update_draft=False, draft="20", message="Hmm, why?")
    sim = _model_user([reject], extract=lambda text: "20")
    await sim.react(_history(PROSE), turn=1)
    assert sim.draft == ""
