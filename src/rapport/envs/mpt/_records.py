"""History sessions as run-log records, an optional paraphrase pass, and the truth in words."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from rapport.llm import GenerateConfig, Message, ModelError, ModelRoles, ToolCall
from rapport.log import ErrorEvent, Event, SessionRecord, Speaker, ToolCallEvent, Turn

from ._schema import load_data
from ._types import MPTHistoryOutcome, MPTHistorySession


def history_record(
    user_id: str,
    session: MPTHistorySession,
    *,
    condition: str = "",
    spec_id: str = "",
    index: int | None = None,
) -> SessionRecord:
    """A history session's dialogue and executed calls as a `SessionRecord`.

    The calls are placed before the closing two utterances (the agent books, then says so).
    """
    utterances = session.dialogue
    cut = len(utterances) - 2 if len(utterances) >= 4 else len(utterances)
    calls = session.calls or [session.call]
    turns: list[Turn] = []
    events: list[Event] = []
    for u in utterances[:cut]:
        turns.append(Turn(index=len(turns), speaker=_speaker(u.role), text=u.text))
    for call in calls:
        turns.append(
            Turn(
                index=len(turns),
                speaker="agent",
                tool_calls=[ToolCall(name=call.name, arguments=call.arguments)],
            )
        )
        events.append(
            ToolCallEvent(
                turn=len(turns) - 1,
                name=call.name,
                arguments=call.arguments,
                result=session.result,
            )
        )
        turns.append(Turn(index=len(turns), speaker="tool", text=session.result))
    for u in utterances[cut:]:
        turns.append(Turn(index=len(turns), speaker=_speaker(u.role), text=u.text))
    return SessionRecord(
        condition=condition,
        user_id=user_id,
        index=session.index if index is None else index,
        spec_id=spec_id or f"{user_id}-h{session.index}",
        split="train",
        turns=turns,
        events=events,
        outcome=MPTHistoryOutcome(domain=session.domain),
    )


def _speaker(role: str) -> Speaker:
    return "user" if role == "user" else "agent"


class Paraphrase(BaseModel):
    """A reworded user message."""

    text: str = Field(max_length=400)


async def paraphrase_record(record: SessionRecord, models: ModelRoles) -> None:
    """Reword the user's turns with the ``user`` model, keeping every value (cached by the
    model cache, so a re-run costs nothing). A failed rewrite keeps the template text."""
    model = models.get("user")
    for turn in record.turns:
        if turn.speaker != "user" or not turn.text:
            continue
        prompt = [
            Message(
                role="system",
                content="Reword the customer's message naturally. Keep every "
                'name, number, date and option word exactly. Reply as JSON {"text": ...}.',
            ),
            Message(role="user", content=turn.text),
        ]
        try:
            out = await model.generate(
                prompt, schema=Paraphrase, config=GenerateConfig(max_tokens=120)
            )
            turn.text = out.parsed.text
        except ModelError as exc:
            record.events.append(
                ErrorEvent(turn=turn.index, where="paraphrase", message=str(exc)[:300])
            )


def truth_text(plan: dict[str, Any]) -> str:
    """The user's current preferences in words (read only by the oracle memory)."""
    groups = load_data()["groups"]
    parts = [
        f"{groups[g]['options'][o]['description']}" for g, o in plan["prefs"].items() if g in groups
    ]
    return "; ".join(parts)
