"""`rag`: past utterances and calls retrieved for the current request."""

from __future__ import annotations

import pytest

from rapport.llm import Message, ModelRoles, ScriptedAPI, ToolCall
from rapport.log import SessionRecord, Turn
from rapport.memory import SessionInfo, UserRef, create_memory
from rapport.memory._rag import UtteranceIndex, record_units


def _record(index: int, user_text: str, call: str, args: dict) -> SessionRecord:
    return SessionRecord(
        condition="c",
        user_id="u",
        index=index,
        spec_id=f"s{index}",
        turns=[
            Turn(index=0, speaker="user", text=user_text),
            Turn(index=1, speaker="agent", tool_calls=[ToolCall(name=call, arguments=args)]),
        ],
    )


def test_units_are_utterances_and_calls() -> None:
    units = record_units(_record(0, "hello", "ReserveCar", {"car_type": "Compact"}))
    assert units == [("user: hello", 0), ('call: ReserveCar(car_type="Compact")', 1)]


@pytest.mark.parametrize("backend", ["bm25", "hashing"])
async def test_the_matching_session_is_retrieved(backend: str) -> None:
    memory = create_memory("rag", ModelRoles({"all": ScriptedAPI([])}), k=2, backend=backend)
    user = UserRef(id="u")
    await memory.learn(
        user, _record(0, "I need a rental car in Austin", "ReserveCar", {"car_type": "Compact"})
    )
    await memory.learn(user, _record(1, "Play some jazz music", "PlaySong", {"song_name": "Blue"}))
    await memory.context(user, SessionInfo(index=2, benchmark="mpt", task="ReserveCar: rent"))
    text = await memory.recall(user, [Message(role="user", content="rent a car in Denver")])
    assert "ReserveCar" in text and "PlaySong" not in text.split("\n")[1]
    assert "[session 1]" in text


async def test_restore_rebuilds_the_index() -> None:
    roles = ModelRoles({"all": ScriptedAPI([])})
    first = create_memory("rag", roles, backend="bm25")
    user = UserRef(id="u")
    await first.learn(user, _record(0, "a vegan dinner please", "ReserveRestaurant", {}))
    second = create_memory("rag", roles, backend="bm25")
    second.restore(user, first.snapshot(user))
    text = await second.recall(user, [Message(role="user", content="vegan dinner")])
    assert "vegan" in text


def test_index_returns_best_first_and_caps_k() -> None:
    index = UtteranceIndex("hashing")
    index.add(["compact car rental", "jazz concert tickets", "cheap compact car"])
    hits = index.search("compact car", 10)
    assert len(hits) == 3 and hits[0][1] >= hits[1][1] >= hits[2][1]
    assert {hits[0][0], hits[1][0]} == {0, 2}
