"""The default session is MultiSessionCollab's: the agent opens, the user model decides and
may end at any turn, the judge grades the draft; Len, UE and TS count as MSC's code does."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from rapport.envs import Condition, SessionSpec
from rapport.envs.collab import (
    OPENING,
    CollabBenchmark,
    CollabTask,
    DraftUpdateEvent,
    EnforcementEvent,
    PreferenceVerdictEvent,
    Problem,
    Protocol,
    load_msc_prompts,
)
from rapport.eval import play_session
from rapport.llm import ModelRoles, Request, ScriptedAPI
from rapport.log import JudgeEvent, StopEvent, StopReason, UserGuardEvent
from rapport.memory import create_memory

PREFS = ("bullet_points", "blunt", "stepwise_derivation")


def said(
    response: str,
    *,
    enforce: bool = False,
    draft: str = "I don't know",
    broken: tuple[int, ...] = (),
) -> str:
    """One reply of the user model, in the JSON layout its prompt asks for."""
    checks = [{"reasoning": "r", "satisfied": n not in broken} for n in range(len(PREFS))]
    return json.dumps(
        {
            "preferences": checks,
            "enforce_preferences": enforce,
            "reasoning": "r",
            "draft_answer": draft,
            "should_terminate": "TERMINATE" in response,
            "response": response,
        }
    )


def grade(accuracy: int) -> str:
    return json.dumps({"reasoning": "compared with the reference", "accuracy": accuracy})


async def play(
    kit: SimpleNamespace,
    agent: list[str],
    user: list[str],
    *,
    max_turns: int = 3,
    judge: list[str] | None = None,
    protocol: Protocol | None = None,
    memory: Any = None,
) -> tuple[Any, Any, dict[str, ScriptedAPI]]:
    apis = {
        "agent": ScriptedAPI(agent, name="scripted/agent"),
        "user": ScriptedAPI(user, name="scripted/user"),
        "judge": ScriptedAPI(judge or [grade(0)], name="scripted/judge"),
    }
    roles = ModelRoles(dict(apis))
    problem: Problem = kit.TRAIN.model_copy(update={"reference": "120 / 2 = 60 km/h"})
    bench = CollabBenchmark([problem], max_turns=max_turns, protocol=protocol or Protocol())
    spec = SessionSpec(id=problem.id, user_id="user-000", index=0, task=CollabTask(problem=problem))
    record = await play_session(
        bench,
        spec,
        kit.make_user(PREFS),
        models=roles,
        memory=memory(roles) if memory else create_memory("none", roles),
        condition=Condition(name="none", memory="none"),
    )
    return bench, record, apis


async def test_hand_checked_conversation_counts_as_msc(kit: SimpleNamespace) -> None:
    """MSC's loop with max_turns 3: greeting, then (user, agent) x 3; the user never reads
    the third reply. Len = len(conversation) = 1 + 3 + 3 = 7; UE = user messages whose
    enforce flag is true = 1; the draft is the last user message's, "I don't know"; the
    judge says 0, so TS = 0."""
    agent = [
        "Sure. What distance and what time?",
        "The average speed is 60 km/h.",
        "- 60 km/h",
    ]
    user = [
        said("I have a question about a train."),
        said("It goes 120 km in 2 hours."),
        said("Please put that in bullet points.", enforce=True, broken=(0,)),
    ]
    bench, record, apis = await play(kit, agent, user, judge=[grade(0)])
    assert record.status == "ok"
    assert [t.speaker for t in record.turns] == ["agent", "user"] * 3 + ["agent"]
    assert record.turns[0].text == OPENING
    assert len(apis["user"].requests) == 3  # not asked about the capped reply
    [stop] = record.events_of(StopEvent)
    assert stop.reason == StopReason.TURN_CAP
    assert [e.turn for e in record.events_of(EnforcementEvent)] == [5]
    assert record.outcome.draft == "I don't know"
    assert bench.score(record) == {"TS": 0.0, "UE": 1.0, "UE_pref": 1.0, "Len": 7.0}


async def test_the_user_may_end_at_its_first_turn(kit: SimpleNamespace) -> None:
    bench, record, apis = await play(kit, [], [said("Never mind. TERMINATE")])
    assert [t.speaker for t in record.turns] == ["agent", "user"]
    assert not apis["agent"].requests
    assert record.events_of(StopEvent)[0].reason == StopReason.USER_ENDED
    assert bench.score(record)["Len"] == 2.0 and bench.score(record)["UE"] == 0.0


async def test_the_judge_grades_the_draft_against_the_reference(kit: SimpleNamespace) -> None:
    agent = ["What are the numbers?", "120 / 2 = 60, so 60 km/h."]
    user = [
        said("Help with a speed problem?"),
        said("120 km, 2 hours."),
        said("TERMINATE", draft="60"),
    ]
    bench, record, apis = await play(kit, agent, user, judge=[grade(1)])
    assert bench.score(record) == {"TS": 1.0, "UE": 0.0, "UE_pref": 0.0, "Len": 6.0}
    [asked] = apis["judge"].requests
    prompt = asked.messages[-1].content
    assert "120 / 2 = 60 km/h" in prompt and "60" in prompt
    assert asked.config.temperature == 0.0 and asked.config.max_tokens == 1024
    [verdict] = record.events_of(JudgeEvent)
    assert verdict.score == 1.0 and record.outcome.grader == "judge"
    assert [e.draft for e in record.events_of(DraftUpdateEvent)] == ["60"]


async def test_match_grading_is_an_option(kit: SimpleNamespace) -> None:
    user = [said("Speed question."), said("TERMINATE", draft="60 km/h")]
    bench, record, apis = await play(
        kit, ["It is 60 km/h."], user, protocol=Protocol(grader="match")
    )
    assert not apis["judge"].requests and not record.events_of(JudgeEvent)
    assert bench.score(record)["TS"] == 1.0


async def test_an_enforcing_message_that_ends_counts_and_ends(kit: SimpleNamespace) -> None:
    """MSC's code ends on the token whatever the flag says, and counts the flag."""
    user = [said("Help?"), said("Use bullets. TERMINATE", enforce=True, broken=(0,))]
    bench, record, _ = await play(kit, ["It is 60."], user)
    assert bench.score(record)["UE"] == 1.0 and bench.score(record)["Len"] == 4.0


async def test_the_user_reads_the_whole_conversation_roles_reversed(kit: SimpleNamespace) -> None:
    agent = ["What is it about?", "Which numbers?", "60 km/h."]
    user = [said("A question."), said("A train."), said("120 km in 2 hours.")]
    _, _, apis = await play(kit, agent, user, max_turns=3)
    last: Request = apis["user"].requests[-1]
    roles = [m.role for m in last.messages]
    assert roles == ["system", "user", "assistant", "user", "assistant", "user"]
    assert last.messages[1].content == OPENING
    assert last.config.temperature == 1.0 and last.config.max_tokens == 1024
    system = last.messages[0].content
    assert kit.TRAIN.question in system and "Ada, a carpenter" in system
    asked = apis["agent"].requests[0]
    assert asked.config.temperature == 1.0 and asked.config.max_tokens == 2048
    assert "250 words" not in asked.messages[0].content


async def test_checker_verdicts_are_a_second_opinion_by_default(kit: SimpleNamespace) -> None:
    """The model saw no broken preference; the bullet checker disagrees: under the default
    the model's decision stands and the checker is recorded beside it."""
    user = [said("Help?"), said("Thanks, go on.")]
    _, record, _ = await play(kit, ["The speed is 60 km/h."], user, max_turns=2)
    verdicts = [v for v in record.events_of(PreferenceVerdictEvent) if v.turn == 3]
    bullets = next(v for v in verdicts if v.preference_id == "bullet_points")
    assert bullets.model_satisfied and bullets.checker_satisfied is False
    assert not bullets.enforced and not record.events_of(EnforcementEvent)


async def test_checkers_decide_when_asked(kit: SimpleNamespace) -> None:
    user = [said("Help?"), said("Thanks, go on.", draft="60")]
    _, record, _ = await play(
        kit, ["The speed is 60 km/h."], user, max_turns=2, protocol=Protocol(verdicts="checkers")
    )
    enforced = {e.preference_id for e in record.events_of(EnforcementEvent)}
    assert "bullet_points" in enforced
    assert record.events_of(UserGuardEvent)  # code wrote the enforcing message
    assert record.outcome.draft == "I don't know"  # an enforcing turn keeps the draft


async def test_the_small_protocol_adds_the_length_rule(kit: SimpleNamespace) -> None:
    harness = kit.Harness(
        ["Could you tell me the numbers?"], kit.scripted_user("Help me with a speed question.", [])
    )
    await harness.run(max_turns=1, protocol=kit.small_protocol())
    assert "250 words" in harness.agent_api.requests[0].messages[0].content
    assert harness.agent_api.requests[0].config.temperature == 0.7


async def test_picked_notes_open_the_greeting_as_msc_prepends_them(kit: SimpleNamespace) -> None:
    from rapport.memory import BaseMemory

    class Notes(BaseMemory):
        name = "notes"

        async def context(self, user, session):  # type: ignore[no-untyped-def]
            return "Wants bullet points."

        async def recall(self, user, conversation):  # type: ignore[no-untyped-def]
            return f"Picked: bullets ({len(conversation)} messages)"

    agent = ["What are the numbers?", "- 60 km/h"]
    user = [said("A speed question."), said("120 km in 2 hours."), said("Thanks. TERMINATE")]
    _bench, record, apis = await play(kit, agent, user, memory=Notes)
    assert record.status == "ok"
    for n, request in enumerate(apis["agent"].requests):
        system, greeting, *rest = request.messages
        assert "Wants bullet points." in system.content
        assert (greeting.role, greeting.content) == (
            "assistant",
            f"Picked: bullets ({2 + 2 * n} messages)\n\n{OPENING}",
        )
        assert rest[-1].role == "user" and "Picked" not in rest[-1].content
    assert record.turns[0].text == OPENING  # the record keeps what was said


async def test_the_agent_s_reply_reaches_the_user_as_written(kit: SimpleNamespace) -> None:
    written = "The average speed is 60 km/h.  \n\n"
    user = [said("A train question."), said("Thanks. TERMINATE")]
    _bench, record, apis = await play(kit, [written], user)
    assert record.turns[2].text == written
    assert apis["user"].requests[1].messages[-1].content == written


CHECKOUT = Path(__file__).parent / "data" / "msc_checkout"


async def test_msc_s_json_path_asks_again_and_keeps_the_response(kit: SimpleNamespace) -> None:
    prompts = load_msc_prompts(CHECKOUT, "json")
    agent = ["Sure, no JSON here.", json.dumps({"reasoning": "r", "response": "60 km/h."})]
    user = [said("A train question."), said("Thanks. <<CHAT OVER>>")]
    _bench, record, apis = await play(kit, agent, user, protocol=Protocol(prompts=prompts))
    assert record.turns[2].text == "60 km/h."
    first, again = apis["agent"].requests
    assert first.messages[0].content.startswith("You help people with their problems. Keep")
    assert first.config.seed != again.config.seed


async def test_a_user_without_preferences_gets_the_plain_prompt_and_no_ue(
    kit: SimpleNamespace,
) -> None:
    user = [said("A train question.", enforce=True), said("Thanks. TERMINATE")]
    apis = {
        "agent": ScriptedAPI(["60 km/h."], name="scripted/agent"),
        "user": ScriptedAPI(user, name="scripted/user"),
        "judge": ScriptedAPI([grade(1)], name="scripted/judge"),
    }
    roles = ModelRoles(dict(apis))
    bench = CollabBenchmark([kit.TRAIN], max_turns=3)
    spec = SessionSpec(id="s", user_id="user-000", index=0, task=CollabTask(problem=kit.TRAIN))
    plain = Condition(name="plain", memory="none", settings={"preferences": False})
    record = await play_session(
        bench,
        spec,
        kit.make_user(PREFS),
        models=roles,
        memory=create_memory("none", roles),
        condition=plain,
    )
    system = apis["user"].requests[0].messages[0].content
    assert "preference" not in system.lower()
    assert not record.events_of(EnforcementEvent)
    assert bench.score(record)["UE"] == 0.0
