"""Reflection in MSC's form: one free-text notes document, rewritten from the whole
conversation, given whole at session start, its relevant part picked before each reply."""

from __future__ import annotations

import json

from rapport.llm import Message, ModelRoles, Request, ScriptedAPI
from rapport.log import SessionInfo, SessionRecord, Turn, UserSpec
from rapport.memory import create_memory

LONG = "Wants bullet points. " * 200  # far past the list form's 160-character notes


def memory_reply(request: Request) -> str:
    title = str((request.json_schema or {}).get("title", ""))
    if title == "NotesSelection":
        return json.dumps({"reasoning": "r", "relevant_notes": "Use bullet points."})
    return json.dumps({"reasoning": "They asked for bullets.", "notes": LONG})


def record() -> SessionRecord:
    turns = [
        Turn(index=0, speaker="agent", text="How can I help you?"),
        Turn(index=1, speaker="user", text="A speed question."),
        Turn(index=2, speaker="agent", text="It is 60 km/h."),
        Turn(index=3, speaker="user", text="Please use bullet points."),
    ]
    return SessionRecord(
        run_id="r", condition="reflection", user_id="u", spec_id="s", index=0, turns=turns
    )


async def test_notes_are_one_uncapped_document_read_whole_and_picked_per_turn() -> None:
    api = ScriptedAPI(responder=memory_reply, name="scripted/memory")
    memory = create_memory("reflection", ModelRoles({"memory": api}), form="msc")
    user = UserSpec(id="u", persona="p", preferences=[])
    await memory.learn(user, record())
    update = api.requests[0]
    shown = update.messages[0].content
    assert "Assistant: How can I help you?" in shown and "User: Please use bullet points." in shown
    assert update.config.temperature == 1.0 and update.config.max_tokens == 2048
    [note] = memory.snapshot(user).items
    assert note.text == LONG.strip()
    context = await memory.context(user, SessionInfo(index=1, benchmark="collab"))
    assert LONG.strip() in context
    recalled = await memory.recall(user, [Message(role="assistant", content="How can I help you?")])
    assert "Use bullet points." in recalled
    assert str(api.requests[-1].json_schema.get("title")) == "NotesSelection"  # type: ignore[union-attr]


async def test_no_notes_no_calls_before_the_first_session() -> None:
    api = ScriptedAPI(responder=memory_reply, name="scripted/memory")
    memory = create_memory("reflection", ModelRoles({"memory": api}), form="msc")
    user = UserSpec(id="u", persona="p", preferences=[])
    assert await memory.context(user, SessionInfo(index=0, benchmark="collab")) == ""
    assert await memory.recall(user, [Message(role="user", content="hi")]) == ""
    assert not api.requests
