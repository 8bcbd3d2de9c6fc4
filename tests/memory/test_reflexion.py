"""Reflexion: reflections on failed train episodes reach the next episodes' prompts."""

from __future__ import annotations

from rapport.envs.gyms import GymOutcome
from rapport.llm import ModelRoles, ScriptedAPI
from rapport.log import SessionRecord, Turn
from rapport.memory import SessionInfo, UserRef, create_memory


def record(index: int, reward: float, split: str = "train") -> SessionRecord:
    return SessionRecord(
        condition="reflexion",
        user_id="u",
        index=index,
        spec_id=f"s{index}",
        split=split,
        turns=[Turn(index=0, speaker="agent", text="[answer] x")],
        outcome=GymOutcome(env="telepathy", trajectory_reward=reward),
    )


async def test_failed_episodes_are_reflected_on_and_carried_forward() -> None:
    api = ScriptedAPI(["Ask about the category first.", "Guess only after 5 questions."])
    memory = create_memory("reflexion", ModelRoles({"all": api}))
    user, info = UserRef(id="u"), SessionInfo(index=0, benchmark="gym")
    assert await memory.context(user, info) == ""
    await memory.learn(user, record(0, 0.0))
    await memory.learn(user, record(1, 0.9))  # a success: nothing to reflect on
    await memory.learn(user, record(2, 0.1))
    context = await memory.context(user, info)
    assert "Ask about the category first." in context and "Guess only after" in context
    assert len(api.requests) == 2 and "telepathy" in api.requests[0].messages[0].content
    assert [i.provenance[0].session for i in memory.snapshot(user).items] == [0, 2]


async def test_only_the_last_reflections_are_kept_and_eval_sessions_teach_nothing() -> None:
    api = ScriptedAPI(responder=lambda r: f"note {len(api.requests)}")
    memory = create_memory("reflexion", ModelRoles({"all": api}), keep=2)
    user = UserRef(id="u")
    for i in range(4):
        await memory.learn(user, record(i, 0.0))
    await memory.learn(user, record(9, 0.0, split="eval"))
    assert [i.text for i in memory.snapshot(user).items] == ["note 3", "note 4"]
