"""`full_history`: every learned session, verbatim, in order."""

from __future__ import annotations

from rapport.envs.mpt import MPTHistoryOutcome
from rapport.llm import ModelRoles, ScriptedAPI, ToolCall
from rapport.log import SessionRecord, Turn
from rapport.memory import SessionInfo, UserRef, create_memory, format_call


def _record(index: int, text: str) -> SessionRecord:
    return SessionRecord(
        condition="c",
        user_id="u",
        index=index,
        spec_id=f"s{index}",
        turns=[
            Turn(index=0, speaker="user", text=text),
            Turn(index=1, speaker="agent", tool_calls=[ToolCall(name="Book", arguments={"n": 2})]),
            Turn(index=2, speaker="tool", text="ok"),
        ],
        outcome=MPTHistoryOutcome(domain="Hotels"),
    )


async def test_context_holds_every_session_in_order() -> None:
    memory = create_memory("full_history", ModelRoles({"all": ScriptedAPI([])}))
    user, info = UserRef(id="u"), SessionInfo(index=2, benchmark="mpt")
    assert await memory.context(user, info) == ""
    await memory.learn(user, _record(0, "first visit"))
    await memory.learn(user, _record(1, "second visit"))
    text = await memory.context(user, info)
    assert text.index("first visit") < text.index("second visit")
    assert "## Session 2 (Hotels)" in text and "call: Book(n=2)" in text
    assert "result: ok" in text
    assert len(memory.snapshot(user).items) == 2


def test_format_call_writes_json_literals() -> None:
    assert format_call("F", {"a": "x y", "n": 3, "b": True}) == 'F(a="x y", n=3, b=true)'
