"""PRIME retrieval with the real MiniLM embedder: a live turn finds the lesson for its situation.

The trajectories are shaped like those of a recorded run of the 1.5B model on FunctionGym
and TelepathyGym (its questions, wrong guesses and untagged replies), so the texts compared
are the ones retrieval really sees: a live turn's situation, and the situation distillation
stored with each experience, at the threshold measured for MiniLM.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from rapport.envs.gyms import GymOutcome
from rapport.llm import Message, ModelRoles, Request, ScriptedAPI
from rapport.log import RewardEvent, SessionRecord, Turn
from rapport.memory import Embedder, SessionInfo, UserRef, get_embedder
from rapport.memory.prime import (
    SIMILARITY,
    Experience,
    PrimeMemory,
    distill,
    situation_text,
    stage_of,
)

THRESHOLD = SIMILARITY["all-MiniLM-L6-v2"]
TELEPATHY = "I am thinking of something. Ask me yes/no questions, then guess."
FUNCTION = "Find f. Then give the rule and f(6, -8, -9, -6). You have 16 turns."
UNTAGGED = "First, we'll try to guess the behaviour of f with some test inputs: f(1, 2, 3, 4) = 17"
REFUSED = "Unrecognized move. Start your message with [action], [search], [answer] or [finish]."
WRONG = "No, that is not it."

# name -> (opening, env, exchanges before the key turn, the key turn's move)
LEARNED: dict[str, tuple[str, str, list[tuple[str, str]], str]] = {
    "telepathy-start": (TELEPATHY, "telepathy", [], "[action] Is it a living thing?"),
    "telepathy-narrowing": (
        TELEPATHY,
        "telepathy",
        [
            ("[action] Is it a living thing?", "no"),
            ("[action] Is it a plant?", "no"),
            ("[action] Is it a vehicle?", "yes"),
            ("[action] Is it large?", "yes"),
        ],
        "[answer] submarine",
    ),
    "telepathy-wrong-guesses": (
        TELEPATHY,
        "telepathy",
        [("[action] Would you like an example?", "yes")]
        + [(f"[answer] A {x}.", WRONG) for x in ("cat", "apple", "dog", "fern", "lake")] * 2
        + [("[answer] A sunset.", WRONG), ("[answer] A tree.", WRONG)],
        "[answer] A food.",
    ),
    "function-untagged": (FUNCTION, "function", [(UNTAGGED, REFUSED)], UNTAGGED),
    "function-queries": (
        FUNCTION,
        "function",
        [
            ("[action] f(0, 0, 0, 0)", "f(0, 0, 0, 0) = 0"),
            ("[action] f(1, 0, 0, 0)", "f(1, 0, 0, 0) = -1"),
            ("[action] f(0, 1, 0, 0)", "f(0, 1, 0, 0) = 0"),
            ("[action] f(0, 0, 1, 0)", "f(0, 0, 1, 0) = 1"),
        ],
        "[action] f(0, 0, 0, 1)",
    ),
}

# live turns of other episodes -> the learned experience that fits them
LIVE: dict[str, tuple[str, str, list[tuple[str, str]]]] = {
    "telepathy-start": ("telepathy", TELEPATHY, []),
    "telepathy-narrowing": (
        "telepathy",
        TELEPATHY,
        [
            ("[action] Is it alive?", "yes"),
            ("[action] Is it a mammal?", "no"),
            ("[action] Does it fly?", "yes"),
            ("[action] Is it small?", "yes"),
        ],
    ),
    "telepathy-wrong-guesses": (
        "telepathy",
        TELEPATHY,
        [("[action] Is it a place?", "yes")]
        + [(f"[answer] A {x}.", WRONG) for x in ("park", "school", "beach", "city")] * 3,
    ),
    "function-untagged": (
        "function",
        "Find f. Then give the rule and f(-5, -8, -6, -6). You have 16 turns.",
        [("To find the function f(a, b, c, d) we need to analyze the query", REFUSED)],
    ),
    "function-queries": (
        "function",
        "Find f. Then give the rule and f(-5, -8, -6, -6). You have 16 turns.",
        [
            ("[action] f(1, 1, 1, 1)", "f(1, 1, 1, 1) = 2"),
            ("[action] f(2, 1, 1, 1)", "f(2, 1, 1, 1) = 3"),
            ("[action] f(1, 2, 1, 1)", "f(1, 2, 1, 1) = 2"),
            ("[action] f(1, 1, 2, 1)", "f(1, 1, 2, 1) = 3"),
        ],
    ),
}


@pytest.fixture(scope="module")
def embedder() -> Embedder:
    found = get_embedder("auto")
    if found.name != "all-MiniLM-L6-v2":
        pytest.skip("the embeddings extra (MiniLM) is not installed")
    return found


def _record(env: str, opening: str, exchanges: list[tuple[str, str]], move: str) -> SessionRecord:
    record = SessionRecord(condition="prime", user_id=f"{env}-0", index=0, spec_id=f"{env}:train:1")
    record.turns.append(Turn(index=0, speaker="user", text=opening))
    for agent, reply in [*exchanges, (move, "(next)")]:
        i = len(record.turns)
        record.turns += [
            Turn(index=i, speaker="agent", text=agent),
            Turn(index=i + 1, speaker="user", text=reply),
        ]
        record.events.append(RewardEvent(turn=i, reward=0.0))
    record.outcome = GymOutcome(env=env, trajectory_reward=0.0, horizon=16)
    return record


def _writer(request: Request) -> str:
    # prose unlike the live situation text, as a small model writes it
    return json.dumps(
        {
            "situation": "The agent was facing an environment where it had to work "
            "out something hidden, but it was unable to do so.",
            "action": "The agent tried something.",
            "outcome": "It did not work.",
            "lesson": "The agent should always state its move with the right tag.",
        }
    )


async def _learned() -> dict[str, Experience]:
    model = ModelRoles({"all": ScriptedAPI(responder=_writer)}).get("memory")
    out = {}
    for name, (opening, env, exchanges, move) in LEARNED.items():
        made = await distill(
            model,
            _record(env, opening, exchanges, move),
            library_id=name,
            iteration=0,
            k=1,
            fields="all",  # model-written prose in every field: none of it may be embedded
        )
        out[name] = made.experiences[0]
    return out


def _live(env: str, opening: str, exchanges: list[tuple[str, str]]) -> list[Message]:
    messages = [Message(role="user", content=opening)]
    for agent, reply in exchanges:
        messages += [Message(role="assistant", content=agent), Message(role="user", content=reply)]
    return messages


async def test_live_turns_find_their_own_lesson_above_the_threshold(embedder: Embedder) -> None:
    learned = await _learned()
    names = list(LEARNED)
    queries = [
        situation_text(_live(env, opening, ex), env, stage_of(len(ex), 16))
        for env, opening, ex in LIVE.values()
    ]
    keys = embedder.encode([learned[n].embedding_text() for n in names])
    sims = np.asarray(embedder.encode(queries)) @ np.asarray(keys).T
    for row, name in enumerate(LIVE):
        own = names.index(name)
        assert sims[row, own] >= THRESHOLD, (name, sims[row].round(2).tolist())
        assert sims[row].argmax() == own, (name, sims[row].round(2).tolist())
    env_of = [LEARNED[n][1] for n in names]
    other_env = [
        sims[r, c] for r, q in enumerate(LIVE) for c in range(len(names)) if env_of[c] != LIVE[q][0]
    ]
    assert max(other_env) < THRESHOLD
    same_env_other = [
        sims[r, c]
        for r, q in enumerate(LIVE)
        for c, n in enumerate(names)
        if env_of[c] == LIVE[q][0] and n != q
    ]
    assert sum(s >= THRESHOLD for s in same_env_other) <= len(same_env_other) // 3


async def test_prime_recalls_the_fitting_lesson_at_the_default_threshold(
    embedder: Embedder,
) -> None:
    learned = await _learned()
    memory = PrimeMemory(
        ModelRoles({"all": ScriptedAPI(["unused"])}),
        encoder=embedder,
        select_with_model=False,
        select_k=1,
    )
    assert memory.min_similarity == THRESHOLD
    for e in learned.values():
        memory.library.add(e)
    env, opening, exchanges = LIVE["function-untagged"]
    user = UserRef(id="u")
    await memory.context(
        user,
        SessionInfo(index=0, benchmark="gym", task=env, horizon=16, split="train"),
    )
    recall = await memory.recall(user, _live(env, opening, exchanges))
    assert recall and "right tag" in recall
    assert memory._episodes["u"].retrieved == {"function-untagged": 1}
