"""Adapters for mem0 and langmem: message conversion, merging, failure accounting, and a
short run against the embedded model served over the OpenAI protocol."""

from __future__ import annotations

import contextlib
import importlib.util
from types import SimpleNamespace

import pytest

from rapport.llm import Message, ModelRoles, ScriptedAPI, ToolCall
from rapport.log import MemoryItem, SessionRecord, Turn
from rapport.memory import SessionInfo, UserRef, create_memory
from rapport.memory._embed import minilm_path
from rapport.memory._peers import _merge, chat_messages

HAS_MEM0 = importlib.util.find_spec("mem0") is not None and minilm_path() is not None
HAS_LANGMEM = importlib.util.find_spec("langmem") is not None


def _record() -> SessionRecord:
    return SessionRecord(
        condition="c",
        user_id="u",
        index=0,
        spec_id="s",
        turns=[
            Turn(index=0, speaker="user", text="I'm vegetarian, book a table for one."),
            Turn(
                index=1,
                speaker="agent",
                tool_calls=[
                    ToolCall(name="ReserveRestaurant", arguments={"dietary_option": "vegetarian"})
                ],
            ),
            Turn(index=2, speaker="tool", text="status=confirmed"),
            Turn(index=3, speaker="agent", text="Booked."),
        ],
    )


def test_chat_messages_keep_roles_and_write_calls_as_text() -> None:
    assert chat_messages(_record()) == [
        {"role": "user", "content": "I'm vegetarian, book a table for one."},
        {
            "role": "assistant",
            "content": '(executed) ReserveRestaurant(dietary_option="vegetarian")',
        },
        {"role": "assistant", "content": "Booked."},
    ]


def test_merge_applies_inserts_updates_and_deletes() -> None:
    class RemoveDoc:
        json_doc_id = "a"

    items = [MemoryItem(id="a", text="likes jazz"), MemoryItem(id="b", text="solo traveller")]
    extracted = [
        SimpleNamespace(id="b", content=SimpleNamespace(content="travels with family")),
        SimpleNamespace(id="c", content=SimpleNamespace(content="vegetarian")),
        SimpleNamespace(id="a", content=RemoveDoc()),
    ]
    merged = _merge(items, extracted, session=2)
    assert [(i.id, i.text) for i in merged] == [("b", "travels with family"), ("c", "vegetarian")]


@pytest.mark.skipif(not HAS_LANGMEM, reason="the peers extra (langmem) is not installed")
async def test_an_unreachable_endpoint_is_counted_not_raised() -> None:
    memory = create_memory(
        "langmem", ModelRoles({"all": ScriptedAPI([])}), base_url="http://127.0.0.1:9/v1", model="m"
    )
    user = UserRef(id="u")
    await memory.learn(user, _record())
    data = memory.snapshot(user).data
    assert data["calls"] == 1 and data["failures"] == 1 and data["last_error"]
    assert memory.failure_rate(user) == 1.0  # type: ignore[attr-defined]


AVAILABLE = {"mem0": HAS_MEM0, "langmem": HAS_LANGMEM}


@pytest.mark.real_model
@pytest.mark.parametrize("name", ["mem0", "langmem"])
async def test_peer_runs_against_the_local_server(name: str) -> None:
    if not AVAILABLE[name]:
        pytest.skip(f"the peers extra ({name}) is not installed")
    try:
        from rapport.llm import serve_model
    except ImportError:
        pytest.skip("rapport.llm.serve_model is not available")
    with contextlib.ExitStack() as stack:
        try:
            server = stack.enter_context(serve_model("llamacpp/qwen2.5-coder-0.5b", n_ctx=4096))
        except Exception as exc:  # weights or llama-cpp-python absent on this machine
            pytest.skip(f"the embedded model could not be served: {exc}")
        memory = create_memory(
            name,
            ModelRoles({"all": ScriptedAPI([])}),
            base_url=server.base_url,
            model=server.model,
        )
        user = UserRef(id="u")
        await memory.learn(user, _record())
        await memory.context(user, SessionInfo(index=1, benchmark="mpt", task="Restaurant"))
        await memory.recall(user, [Message(role="user", content="book dinner")])
        state = memory.snapshot(user)
        # A small model may break the library's structured output: then it is counted.
        assert state.data["calls"] >= 1
        # A small model may break the library's structured output (a failure) or extract
        # nothing (counted as empty); either way the outcome is accounted.
        outcomes = state.data.get("failures", 0) + state.data.get("empty", 0)
        assert state.items or outcomes >= 1
        rate = memory.failure_rate(user)  # type: ignore[attr-defined]
        print(f"{name}: failure rate {rate:.2f}; items {[i.text for i in state.items]}")
