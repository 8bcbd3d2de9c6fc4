"""PRIME's offers: the turns an experience was offered at (a turn of its environment and
stage), counted at recall, kept in its track record, and what ``prune_basis: offers``
prunes on."""

from __future__ import annotations

import json
from typing import Any, Literal

from rapport.envs.gyms import GymOutcome
from rapport.llm import Message, ModelRoles, ScriptedAPI
from rapport.log import MemoryState, RewardEvent, SessionRecord, Turn
from rapport.memory import HashingEmbedder, SessionInfo, UserRef
from rapport.memory.prime import Conditions, Experience, PendingEpisode, PrimeMemory

LESSON = json.dumps({"lesson": "Vary one input at a time before you answer."})
OPENING = [Message(role="user", content="Find f. Then give the rule.")]
ONE_MOVE = [
    *OPENING,
    Message(role="assistant", content="[action] f(1, 2, 3, 4)"),
    Message(role="user", content="f(1, 2, 3, 4) = 10"),
]


def exp(i: int, env: str = "function", stage: str = "exploration", **kw: Any) -> Experience:
    return Experience.model_validate(
        dict(
            id=f"exp-{i}",
            situation=f"case {i}",
            action="ask",
            outcome="ok",
            lesson=f"lesson {i}",
            stage=stage,
            zone="golden",
            conditions=Conditions(envs=[env]),
            **kw,
        )
    )


def prime(**options: Any) -> PrimeMemory:
    models = ModelRoles({"all": ScriptedAPI(responder=lambda request: LESSON)})
    return PrimeMemory(models, encoder=HashingEmbedder(), select_with_model=False, **options)


def train_record(env: str = "function") -> SessionRecord:
    record = SessionRecord(
        condition="prime", user_id="u", index=0, spec_id=f"{env}:train:1", split="train"
    )
    record.turns = [
        Turn(index=0, speaker="user", text=ONE_MOVE[0].content),
        Turn(index=1, speaker="agent", text=ONE_MOVE[1].content),
        Turn(index=2, speaker="user", text=ONE_MOVE[2].content),
    ]
    record.events.append(RewardEvent(turn=1, reward=0.0))
    record.outcome = GymOutcome(env=env, horizon=16)
    return record


async def start(memory: PrimeMemory, split: Literal["train", "eval"] = "train") -> UserRef:
    user = UserRef(id="u")
    info = SessionInfo(index=0, benchmark="gym", task="function", horizon=16, split=split)
    await memory.context(user, info)
    return user


async def test_offers_are_counted_at_recall_even_when_nothing_clears_the_threshold() -> None:
    memory = prime(min_similarity=2.0, iterations=0)  # no cosine reaches 2: nothing retrieved
    for e in [
        exp(1),
        exp(2, env="*"),
        exp(3, stage="verification"),
        exp(4, env="telepathy"),
        exp(5, superseded_by="exp-1"),
    ]:
        memory.library.add(e)
    user = await start(memory)
    assert await memory.recall(user, OPENING) == ""
    assert await memory.recall(user, ONE_MOVE) == ""
    episode = memory._episodes["u"]
    assert episode.offered == {"exp-1": 2, "exp-2": 2}, "its env (or any) and stage, active"
    assert not episode.retrieved

    await memory.learn(user, train_record())
    track = {i: memory.library.experiences[f"exp-{i}"] for i in range(1, 6)}
    assert {i: (e.offers, e.retrievals) for i, e in track.items()} == {
        1: (2, 0),
        2: (2, 0),
        3: (0, 0),
        4: (0, 0),
        5: (0, 0),
    }
    assert "offered at 2 turns, retrieved at 0 turns of 0 episodes" in track[1].markdown()
    items = {item.id: item.attributes for item in memory.snapshot(user).items}
    assert items["exp-2"]["offers"] == 2 and items["exp-3"]["offers"] == 0

    eval_user = await start(memory, split="eval")
    await memory.recall(eval_user, OPENING)
    assert not memory._episodes["u"].offered, "eval episodes leave the track record alone"


async def test_a_snapshot_from_before_offers_still_restores() -> None:
    memory = prime()
    memory.library.add(exp(1, retrievals=3, uses=2, successes=1))
    memory.library.commit(added=["exp-1"], removed=[], note="distilled")
    memory.pending = {"k": PendingEpisode(round=1, record=train_record(), retrieved={"exp-1": 1})}
    data = json.loads(json.dumps(memory.snapshot(UserRef(id="u")).data))
    for stored in data["library"]["experiences"].values():
        del stored["offers"]  # as written before offers were tracked
    for stored in data["pending"].values():
        del stored["offered"]

    fresh = prime()
    fresh.restore(UserRef(id="v"), MemoryState(data=data))
    e = fresh.library.experiences["exp-1"]
    assert (e.offers, e.retrievals, e.uses, e.successes) == (0, 3, 2, 1)
    assert fresh.pending["k"].offered == {} and fresh.pending["k"].retrieved == {"exp-1": 1}


async def test_the_prune_basis_option_reaches_the_pruning() -> None:
    async def pruned(**options: Any) -> dict[str, str | None]:
        memory = prime(**options)
        for e in [exp(1, offers=3), exp(2, offers=6, retrievals=1, uses=1), exp(3)]:
            memory.library.add(e)
        memory.library.iteration = memory.library.rounds = 1
        await memory._consolidate(1)  # evolution iteration 2: it prunes
        return {e.id: e.pruned for e in memory.library.experiences.values()}

    assert await pruned() == {
        "exp-1": "retrieved 0 times over rounds 1-2 (< 2)",
        "exp-2": "retrieved 1 time over rounds 1-2 (< 2)",
        "exp-3": "retrieved 0 times over rounds 1-2 (< 2)",
    }
    assert await pruned(prune_basis="offers") == {
        "exp-1": None,  # offered at 3 turns, under min_offers (4): not judged yet
        "exp-2": "retrieved 1 time at 6 offered turns (< 2)",
        "exp-3": None,
    }
    assert (await pruned(prune_basis="offers", min_offers=3))["exp-1"] == (
        "retrieved 0 times at 3 offered turns (< 2)"
    )


def late_success() -> SessionRecord:
    """Solved with the 16th and last allowed move (the gym's score 0.8)."""
    record = train_record()
    record.turns, record.events = record.turns[:1], []
    for i in range(16):
        reward = 0.8 if i == 15 else 0.0
        record.turns += [
            Turn(index=2 * i + 1, speaker="agent", text=f"[action] f({i}, 0, 0, 0)"),
            Turn(index=2 * i + 2, speaker="user", text=f"f({i}, 0, 0, 0) = {i}"),
        ]
        record.events.append(RewardEvent(turn=2 * i + 1, reward=reward))
    record.outcome = GymOutcome(env="function", horizon=16, trajectory_reward=0.8, success=True)
    return record


def test_a_late_success_is_no_poor_outcome_for_what_it_retrieved() -> None:
    for how, poor in (("outcome", 0), ("score", 0), ("R2G", 1)):
        memory = prime(trajectory_reward=how)
        memory.library.add(exp(1))
        pending = PendingEpisode(round=0, record=late_success(), retrieved={"exp-1": 2})
        memory._track([("k", pending)], iteration=1)
        e = memory.library.experiences["exp-1"]
        assert (e.uses, e.successes, e.poor_uses) == (1, 1, poor), how
