from rapport.llm import Message, ModelRoles, ScriptedAPI
from rapport.log import SessionRecord
from rapport.memory import SessionInfo, UserRef, create_memory

USER = UserRef(id="u1", truth="Prefers bullet points. Wants a TL;DR at the end.")
SESSION = SessionInfo(index=2, benchmark="collab")


def roles() -> ModelRoles:
    # No scripted replies: any model call would raise, proving these memories make none.
    return ModelRoles({"all": ScriptedAPI([])})


async def test_none_carries_nothing() -> None:
    memory = create_memory("none", roles())
    await memory.learn(USER, SessionRecord(condition="none", user_id="u1", index=0, spec_id="p"))
    assert await memory.context(USER, SESSION) == ""
    assert await memory.recall(USER, [Message(role="user", content="hi")]) == ""
    assert memory.snapshot(USER).items == []


async def test_oracle_returns_the_truth_with_provenance() -> None:
    memory = create_memory("oracle", roles())
    assert await memory.context(USER, SESSION) == USER.truth
    (item,) = memory.snapshot(USER).items
    assert item.text == USER.truth
    assert item.provenance[0].session == 2


async def test_oracle_without_truth_is_empty() -> None:
    memory = create_memory("oracle", roles())
    assert await memory.context(UserRef(id="u2"), SESSION) == ""
    assert memory.snapshot(UserRef(id="u2")).items == []


async def test_oracle_snapshot_restore_round_trip() -> None:
    memory = create_memory("oracle", roles())
    await memory.context(USER, SESSION)
    other = create_memory("oracle", roles())
    other.restore(USER, memory.snapshot(USER))
    assert other.snapshot(USER) == memory.snapshot(USER)
