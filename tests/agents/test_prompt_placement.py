"""Where memory's text lands in the agent's prompt."""

from __future__ import annotations

from typing import Literal

from rapport.agents import Agent
from rapport.llm import Message

Placement = Literal["system", "turn"]

HISTORY = [Message(role="user", content="hi"), Message(role="assistant", content="hello")]
LATEST = [*HISTORY, Message(role="user", content="book it")]


def _layout(
    recall_in: Placement = "turn", context_in: Placement = "system"
) -> list[tuple[str, str]]:
    prompt = Agent.messages(
        LATEST,
        instructions="Help.",
        memory_context="prefers aisle",
        recall="likes tea",
        recall_in=recall_in,
        context_in=context_in,
    )
    return [(m.role, m.content) for m in prompt]


def test_by_default_the_context_opens_the_system_prompt_and_recall_follows_the_turn() -> None:
    layout = _layout()
    assert layout[0] == ("system", "Help.\n\n## What you know about this user\nprefers aisle")
    assert layout[1:-1] == [(m.role, m.content) for m in LATEST]
    assert layout[-1] == ("system", "Notes relevant right now:\nlikes tea")


def test_recall_in_the_system_prompt_follows_the_context() -> None:
    layout = _layout(recall_in="system")
    assert layout[0][1].endswith("prefers aisle\n\nNotes relevant right now:\nlikes tea")
    assert layout[-1] == ("user", "book it")


def test_context_at_the_turn_moves_both_next_to_the_latest_message() -> None:
    layout = _layout(context_in="turn", recall_in="system")
    assert layout[0] == ("system", "Help.")
    assert layout[-2] == ("user", "book it")
    assert layout[-1] == (
        "system",
        "## What you know about this user\nprefers aisle\n\nNotes relevant right now:\nlikes tea",
    )


def test_no_memory_text_adds_nothing_wherever_it_is_placed() -> None:
    placements: tuple[Placement, ...] = ("system", "turn")
    for context_in in placements:
        prompt = Agent.messages(LATEST, instructions="Help.", context_in=context_in)
        assert [(m.role, m.content) for m in prompt] == [
            ("system", "Help."),
            *[(m.role, m.content) for m in LATEST],
        ]


async def test_a_plain_reply_streams_its_pieces_and_a_structured_one_comes_whole() -> None:
    from pydantic import BaseModel

    from rapport.llm import Model, ScriptedAPI

    class Answer(BaseModel):
        text: str

    pieces: list[str] = []
    agent = Agent(Model(ScriptedAPI(["one two three", '{"text": "whole"}'])), on_text=pieces.append)
    reply = await agent.respond(LATEST, instructions="Help.")
    assert len(pieces) > 1 and "".join(pieces).strip() == reply.text.strip() == "one two three"
    pieces.clear()
    structured = await agent.respond(LATEST, instructions="Help.", schema=Answer)
    assert pieces == [] and structured.parsed == Answer(text="whole")


def test_recall_first_opens_the_first_message_as_the_memory_wrote_it() -> None:
    prompt = Agent.messages(
        LATEST,
        instructions="Help.",
        memory_context="prefers aisle",
        recall="likes tea",
        recall_in="first",
    )
    layout = [(m.role, m.content) for m in prompt]
    assert layout[0] == ("system", "Help.\n\n## What you know about this user\nprefers aisle")
    assert layout[1] == ("user", "likes tea\n\nhi")
    assert layout[2:] == [(m.role, m.content) for m in LATEST[1:]]
    assert LATEST[0].content == "hi"


def test_recall_first_without_a_conversation_follows_it() -> None:
    prompt = Agent.messages([], instructions="Help.", recall="likes tea", recall_in="first")
    assert [(m.role, m.content) for m in prompt] == [
        ("system", "Help."),
        ("system", "Notes relevant right now:\nlikes tea"),
    ]
