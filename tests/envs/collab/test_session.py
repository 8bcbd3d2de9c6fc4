"""A collab session end to end on scripted agent and user models."""

from __future__ import annotations

from types import SimpleNamespace

from rapport.envs import Condition
from rapport.envs.collab import DraftUpdateEvent, EnforcementEvent, PreferenceVerdictEvent
from rapport.llm import Request
from rapport.log import ErrorEvent, RecallEvent, StopEvent, StopReason

ASK = "Which numbers does your problem use?"
PROSE = "The train covers 120 km in 2 hours, so its speed is 120 / 2 = 60 km/h."
BULLETS = "- Distance: 120 km\n- Time: 2 hours\n- Speed = 120 / 2 = 60 km/h"


async def test_full_session_asks_reveals_enforces_updates_and_stops(kit: SimpleNamespace) -> None:
    user = kit.scripted_user(
        "Hi, I have a question about how fast a train goes.",
        [
            kit.reaction(message="It goes 120 km in 2 hours."),
            # The model misses the prose reply's broken bullet preference and wants to stop.
            kit.reaction(draft="60", stop=True, message="Great, 60 then."),
            kit.reaction(draft="60", stop=True, message="Thanks! [[DONE]]"),
        ],
    )
    h = kit.Harness([ASK, PROSE, BULLETS], user)
    bench, record = await h.run(max_turns=5)

    assert record.status == "ok"
    assert [t.speaker for t in record.turns] == ["user", "agent"] * 3 + ["user"]
    assert "120 km in 2 hours" not in record.turns[0].text
    assert record.turns[2].text == "It goes 120 km in 2 hours."
    enforcements = record.events_of(EnforcementEvent)
    assert [(e.turn, e.preference_id) for e in enforcements] == [(4, "bullet_points")]
    # The enforcing reply names the preference concretely; the draft waited for it.
    assert "bullet" in record.turns[4].text.lower()
    assert [(e.turn, e.draft) for e in record.events_of(DraftUpdateEvent)] == [(6, "60")]
    assert record.turns[6].text == "Thanks!"
    assert record.outcome.draft == "60"
    assert record.outcome.problem_id == "train-speed"
    assert bench.score(record) == {"TS": 1.0, "UE": 1.0, "UE_pref": 1.0, "Len": 7.0}


async def test_max_turns_bounds_the_agent_turns(kit: SimpleNamespace) -> None:
    user = kit.scripted_user("I need help with a speed question.", [])
    h = kit.Harness(lambda _r: PROSE, user)
    bench, record = await h.run(max_turns=2)

    assert sum(t.speaker == "agent" for t in record.turns) == 2
    assert len(record.turns) == 5
    [stop] = record.events_of(StopEvent)
    assert stop.reason == StopReason.TURN_CAP
    assert bench.score(record)["Len"] == 5.0


async def test_no_enforcement_while_the_agent_asks_clarifying_questions(
    kit: SimpleNamespace,
) -> None:
    user = kit.scripted_user(
        "Help with a train problem?",
        [kit.reaction(satisfied=False, enforce=True, message="Use bullets!")] * 3,
    )
    h = kit.Harness(lambda _r: ASK, user)
    _bench, record = await h.run(max_turns=3)

    assert record.events_of(EnforcementEvent) == []
    verdicts = record.events_of(PreferenceVerdictEvent)
    assert len(verdicts) == 9
    assert not any(v.enforced for v in verdicts)


async def test_draft_is_not_updated_while_enforcing(kit: SimpleNamespace) -> None:
    user = kit.scripted_user(
        "Train question.",
        [kit.reaction(draft=f"{60 + i}", stop=True, message="ok") for i in range(3)],
    )
    h = kit.Harness(lambda _r: PROSE, user)
    bench, record = await h.run(max_turns=3)

    assert len(record.events_of(EnforcementEvent)) == 3
    assert record.events_of(DraftUpdateEvent) == []
    assert record.outcome.draft == ""
    assert bench.score(record) == {"TS": 0.0, "UE": 3.0, "UE_pref": 3.0, "Len": 7.0}


async def test_invalid_user_output_ends_the_session_with_an_error(kit: SimpleNamespace) -> None:
    user = kit.scripted_user("Train question.", ["not json at all"] * 10)
    h = kit.Harness(lambda _r: BULLETS, user)
    bench, record = await h.run(max_turns=3)

    assert record.status == "error"
    errors = record.events_of(ErrorEvent)
    assert len(errors) == 1 and errors[0].where == "user"
    assert errors[0].error_type == "OutputValidationError"
    assert bench.score(record)["TS"] == 0.0
    assert any(call.error for call in record.usage)


async def test_agent_failure_is_recorded_not_raised(kit: SimpleNamespace) -> None:
    user = kit.scripted_user("Train question.", [kit.reaction(message="go on")])
    h = kit.Harness([ASK], user)  # the agent model runs out of replies on its second turn
    _bench, record = await h.run(max_turns=3)

    assert record.status == "error"
    assert [e.where for e in record.events_of(ErrorEvent)] == ["agent"]
    assert len(record.turns) == 3


async def test_oracle_memory_reaches_the_agent_prompt(kit: SimpleNamespace) -> None:
    from rapport.memory import create_memory

    seen: list[Request] = []

    def agent(request: Request) -> str:
        seen.append(request)
        return BULLETS

    user = kit.scripted_user("Train question.", [kit.reaction(draft="60", stop=True)])
    h = kit.Harness(agent, user)
    _bench, record = await h.run(
        memory=create_memory("oracle", h.roles), condition=Condition(name="o", memory="oracle")
    )
    system = seen[0].messages[0].content
    assert "bullet" in system.lower()
    assert record.events_of(EnforcementEvent) == []


async def test_recall_is_recorded_when_memory_says_something(kit: SimpleNamespace) -> None:
    from rapport.memory import BaseMemory

    class Reminder(BaseMemory):
        name = "reminder"

        async def recall(self, user, conversation):  # type: ignore[no-untyped-def]
            return "Use bullet points."

    user = kit.scripted_user("Train question.", [kit.reaction(draft="60", stop=True)])
    h = kit.Harness(lambda _r: BULLETS, user)
    _bench, record = await h.run(memory=Reminder(h.roles))
    recalls = record.events_of(RecallEvent)
    assert [(r.turn, r.text) for r in recalls] == [(1, "Use bullet points.")]
