"""ReAct-style prompting: a reasoning-format instruction the gyms' action parser accepts."""

from __future__ import annotations

from rapport.envs.gyms import parse_action
from rapport.llm import ModelRoles, ScriptedAPI
from rapport.memory import SessionInfo, UserRef, create_memory


async def test_react_adds_a_thought_format_and_learns_nothing() -> None:
    api = ScriptedAPI(["unused"])
    memory = create_memory("react", ModelRoles({"all": api}))
    text = await memory.context(UserRef(id="u"), SessionInfo(index=0, benchmark="gym"))
    assert "Thought:" in text
    assert await memory.recall(UserRef(id="u"), []) == ""
    assert not api.requests
    reply = "Thought: it is alive, so ask about legs.\n[action] Does it have four legs?"
    assert parse_action(reply).text == "Does it have four legs?"
