"""`rag`: past utterances and calls retrieved for the current request."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rapport.llm import Message, ModelRoles, ScriptedAPI, ToolCall
from rapport.log import SessionRecord, Turn
from rapport.memory import SessionInfo, UserRef, create_memory
from rapport.memory import _rag as rag
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


WORDS = ["cheap", "compact", "car", "hotel", "quiet", "room", "jazz", "vegan", "window", "seat"]
phrases = st.lists(st.sampled_from(WORDS), min_size=1, max_size=4).map(" ".join)


def _ranked(index: UtteranceIndex, query: str, k: int, *, half_from: int) -> list[int]:
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(rag, "HALF_SCAN_MIN", half_from)
        return [position for position, _ in index.search(query, k)]


@settings(max_examples=40, deadline=None)
@given(texts=st.lists(phrases, min_size=1, max_size=40), query=phrases, k=st.integers(1, 8))
def test_the_float16_scan_ranks_exactly_like_float32(texts: list[str], query: str, k: int) -> None:
    index = UtteranceIndex("hashing")
    index.add(texts)
    exact = _ranked(index, query, k, half_from=10**9)
    assert _ranked(index, query, k, half_from=1) == exact
    scores = [score for _, score in index.search(query, k)]
    assert scores == sorted(scores, reverse=True)


def test_growing_the_index_between_searches_matches_one_build() -> None:
    chunks = [["cheap compact car", "quiet hotel room"], ["jazz night", "vegan dinner"] * 3]
    chunks.append(["a window seat", "cheap hotel room", "compact car rental"])
    grown = UtteranceIndex("hashing")
    for chunk in chunks:
        grown.add(chunk)
        _ranked(grown, "cheap room", 3, half_from=1)  # syncs the float16 copy part-way
    whole = UtteranceIndex("hashing")
    whole.add([text for chunk in chunks for text in chunk])
    for query in ("cheap room", "compact car", "vegan jazz"):
        assert _ranked(grown, query, 4, half_from=1) == _ranked(whole, query, 4, half_from=10**9)


@pytest.mark.parametrize("half_from", [1, 10**9])
def test_equal_texts_come_back_in_the_order_they_were_stored(half_from: int) -> None:
    index = UtteranceIndex("hashing")
    index.add(["jazz concert", "cheap car", "jazz night", "cheap car", "cheap car"])
    assert _ranked(index, "cheap car", 2, half_from=half_from) == [1, 3]
