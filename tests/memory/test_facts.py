"""`facts`: Mem0-style ADD / UPDATE / DELETE / NOOP reconciliation."""

from __future__ import annotations

import json

from rapport.llm import ModelRoles, Request, ScriptedAPI
from rapport.log import MemoryItem, SessionRecord, Turn
from rapport.memory import SessionInfo, UserRef, create_memory
from rapport.memory._facts import FactOperation, apply_operations


def _record(index: int) -> SessionRecord:
    return SessionRecord(
        condition="c",
        user_id="u",
        index=index,
        spec_id=f"s{index}",
        turns=[Turn(index=0, speaker="user", text=f"session {index}")],
    )


def test_operations_apply_and_unknown_ids_are_ignored() -> None:
    items = [MemoryItem(id="f0", text="likes window seats"), MemoryItem(id="f1", text="solo")]
    ops = [
        FactOperation(event="UPDATE", id="f0", text="likes aisle seats"),
        FactOperation(event="DELETE", id="f1"),
        FactOperation(event="ADD", text="vegetarian"),
        FactOperation(event="NOOP", id="f0"),
        FactOperation(event="UPDATE", id="f9", text="ghost"),
        FactOperation(event="DELETE", id="f7"),
    ]
    out, next_id, ignored = apply_operations(items, ops, session=3, next_id=2)
    assert [(i.id, i.text) for i in out] == [("f0", "likes aisle seats"), ("f2", "vegetarian")]
    assert next_id == 3 and ignored == 2
    assert [p.session for p in out[0].provenance] == [3]


async def test_learn_extracts_then_reconciles_with_stored_facts() -> None:
    decisions = []

    def respond(request: Request) -> str:
        title = request.json_schema["title"] if request.json_schema else ""
        if title == "ExtractedFacts":
            return json.dumps({"facts": ["Prefers cheap restaurants", "Travels alone"]})
        decisions.append(request.messages[-1].content)
        return json.dumps(
            {
                "operations": [
                    {"event": "NOOP", "id": "f0"},
                    {"event": "UPDATE", "id": "f1", "text": "Travels alone, always"},
                ]
            }
        )

    memory = create_memory(
        "facts", ModelRoles({"all": ScriptedAPI(responder=respond)}), embedder="hashing"
    )
    user = UserRef(id="u")
    await memory.learn(user, _record(0))
    assert not decisions  # nothing stored yet: code adds without a decision call
    assert [i.text for i in memory.snapshot(user).items] == [
        "Prefers cheap restaurants",
        "Travels alone",
    ]
    await memory.learn(user, _record(1))
    assert "f0: Prefers cheap restaurants" in decisions[0]
    assert [i.text for i in memory.snapshot(user).items] == [
        "Prefers cheap restaurants",
        "Travels alone, always",
    ]
    context = await memory.context(user, SessionInfo(index=2, benchmark="mpt"))
    assert context == "- Prefers cheap restaurants\n- Travels alone, always"


async def test_a_broken_model_output_is_counted_and_memory_kept() -> None:
    memory = create_memory("facts", ModelRoles({"all": ScriptedAPI(responder=lambda r: "nope")}))
    user = UserRef(id="u")
    await memory.learn(user, _record(0))
    state = memory.snapshot(user)
    assert state.items == [] and state.data["failures"] == 1
