"""Reflection notes as MultiSessionCollab writes and retrieves them: one free-text notes
document per user, rewritten after each session from the whole conversation; the whole
document opens every session, and before every agent reply a call picks the notes that bear
on it. Nothing is capped.
"""

from __future__ import annotations

from collections.abc import Callable

from pydantic import BaseModel

from rapport.llm import GenerateConfig, Message, Model
from rapport.log import MemoryItem, MemoryState, Provenance, SessionRecord

NOTES_CONFIG = GenerateConfig(temperature=1.0, max_tokens=2048)
"""MSC writes and picks notes with the agent's own sampling (temperature 1.0, 2048 tokens)."""
NOTES_ID = "notes"


class NotesUpdate(BaseModel):
    """The rewritten notes, with the reasoning that led to them."""

    reasoning: str = ""
    notes: str


class NotesSelection(BaseModel):
    """The notes that bear on the next reply."""

    reasoning: str = ""
    relevant_notes: str = ""


def notes_text(state: MemoryState) -> str:
    """The user's notes document ("" before the first session)."""
    return "\n".join(item.text for item in state.items)


def conversation_text(turns: list[tuple[str, str]]) -> str:
    """A conversation as ``Role: text`` lines, the agent as ``Assistant`` (as the agent
    sees it)."""
    return "\n".join(f"{role}: {text}" for role, text in turns)


def record_conversation(record: SessionRecord) -> str:
    """A session's messages for the notes update."""
    names = {"agent": "Assistant", "user": "User"}
    said = [(names[t.speaker], t.text) for t in record.turns if t.speaker in names]
    return conversation_text(said)


async def update_notes(
    model: Model, render: Callable[..., str], state: MemoryState, record: SessionRecord
) -> None:
    """Rewrite the notes from the session (the previous notes kept on an empty answer).

    Raises:
        ModelError: the model failed (OutputValidationError: no valid notes).
    """
    prompt = render(
        "msc_notes_update.md", notes=notes_text(state), conversation=record_conversation(record)
    )
    out = await model.generate(
        [Message(role="user", content=prompt)], schema=NotesUpdate, config=NOTES_CONFIG
    )
    update: NotesUpdate = out.parsed
    if not update.notes.strip():
        return
    source = Provenance(session=record.index, source="reflection")
    state.items = [MemoryItem(id=NOTES_ID, text=update.notes.strip(), provenance=[source])]
    state.data["sessions_learned"] = int(state.data.get("sessions_learned", 0)) + 1
    state.data["last_reasoning"] = update.reasoning


async def select_notes(
    model: Model, render: Callable[..., str], notes: str, conversation: list[Message]
) -> str:
    """The notes that bear on the agent's next reply, as the model picks them.

    Raises:
        ModelError: the model failed (OutputValidationError: no valid selection).
    """
    names = {"assistant": "Assistant", "user": "User"}
    said = [(names[m.role], m.content) for m in conversation if m.role in names]
    shown = conversation_text(said)
    prompt = render("msc_notes_select.md", conversation=shown, notes=notes)
    out = await model.generate(
        [Message(role="user", content=prompt)], schema=NotesSelection, config=NOTES_CONFIG
    )
    selection: NotesSelection = out.parsed
    return selection.relevant_notes.strip()
