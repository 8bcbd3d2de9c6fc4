"""Calibrate PRIME's similarity threshold per embedder: prints JSON.

PRIME offers a stored experience at a turn when its situation is in the same environment
and stage and its embedding's cosine similarity to the live situation is at least a
threshold. The paper's 0.6 was set for a 1536-d OpenAI embedding; MiniLM and the hashing
fallback spread cosine similarity differently. This script plays each gym with a seeded
random policy (code-decided replies, no model), writes every turn's situation in
retrieval's compact form (the form both a live turn and a stored experience take), and
over the candidate pairs the prefilter lets through (same environment and stage,
different episodes) measures:

- the share of pairs that pass at 0.6 and at other thresholds;
- how well a threshold separates *alike* pairs (the same number of moves so far, the
  same kind of last move and the same kind of last reply) from the rest: the share of
  each that passes, and the threshold with the largest difference (Youden's J).

The threshold the gate is for, whatever the embedder: let through situations like the
live one and hold back the others, which is what the J-best threshold does on these texts.
``--embedders hashing,minilm`` (minilm needs the ``embeddings`` extra).
"""

from __future__ import annotations

import argparse
import itertools
import json
import random
import re
from collections.abc import Callable
from typing import Any

import numpy as np

from rapport.envs.gyms import make_gym, parse_action
from rapport.memory import get_embedder
from rapport.memory.prime import PAPER_SIMILARITY, SIMILARITY, compact_situation, stage_of

ENVS = ("function", "telepathy", "turtle", "intention")
THRESHOLDS = tuple(round(0.05 * i, 2) for i in range(4, 20))

QUESTIONS = {
    "telepathy": (
        "Is it an animal?",
        "Is it a food?",
        "Can it fly?",
        "Is it a mammal?",
        "Is it bigger than a car?",
        "Is it electronic?",
        "Does it live in water?",
        "Is it a plant?",
        "Is it made of metal?",
        "Is it something you eat?",
        "Is it a pet?",
        "Is it found in a kitchen?",
    ),
    "turtle": (
        "Did someone die?",
        "Was it an accident?",
        "Is an animal involved?",
        "Did the weather matter?",
        "Was anyone else there?",
        "Is it about a game?",
        "Did she know him?",
        "Was it at night?",
        "Is money involved?",
        "Was something broken?",
    ),
    "intention": (
        "Who is it for?",
        "What is your budget?",
        "When do you need it?",
        "What style do you like?",
        "How long should it be?",
        "Where will it be?",
        "What is the occasion?",
        "How many people?",
        "What is it about?",
        "What tone do you want?",
    ),
}
ANSWERS = {
    "telepathy": ("[answer] cat", "[answer] apple", "[answer] car", "[answer] rose"),
    "turtle": (
        "[answer] He was a lighthouse keeper and a ship crashed.",
        "[answer] It was a snowman that melted.",
    ),
    "intention": ("[finish]",),
}


def move(env: str, rng: random.Random) -> str:
    """One random move of the kind a small agent makes in ``env``."""
    roll = rng.random()
    if env == "function":
        if roll < 0.75:
            args = ", ".join(str(rng.randint(-3, 5)) for _ in range(4))
            return f"[action] f({args})"
        if roll < 0.9:
            rule = f"{rng.choice('abcd')} + {rng.randint(0, 5)}"
            return f"[answer] rule: {rule}; value: {rng.randint(0, 9)}"
        return "I think the function adds its inputs."
    if roll < 0.8:
        return "[action] " + rng.choice(QUESTIONS[env])
    if roll < 0.92:
        return rng.choice(ANSWERS[env])
    return "Let me think about this."


def reply_kind(env: str, reply: str) -> str:
    """What kind of reply a move got (a value, yes / no / unsure, a detail, an error ...)."""
    text = reply.strip().lower()
    if text.startswith("f("):
        return "value"
    if text.startswith(("unrecognized", "query with", "there is no")):
        return "error"
    if env == "intention" and not text.startswith(("i don't", "thanks")):
        return "detail"
    first = re.findall(r"[a-z]+", text)
    return first[0] if first else "empty"


def episodes(env: str, n: int, seed: int) -> list[list[tuple[str, str, int, tuple[Any, ...]]]]:
    """Situations of ``n`` episodes: (compact text, stage, turn, alike key) per turn."""
    out = []
    for episode in range(n):
        rng = random.Random(f"{seed}:{env}:{episode}")
        gym = make_gym(env, split="train")
        gym.reset(seed * 1000 + episode)
        exchanges: list[tuple[str, str]] = []
        rows = []
        while not gym.done:
            stage = stage_of(gym.turn, gym.horizon)
            last = exchanges[-1] if exchanges else ("", "")
            key = (
                min(len(exchanges), 3),
                parse_action(last[0]).kind if exchanges else "-",
                reply_kind(env, last[1]) if exchanges else "-",
            )
            rows.append((compact_situation(env, stage, exchanges), stage, gym.turn, key))
            message = move(env, rng)
            step = gym.step(message)
            exchanges.append((gym.move_text(message), step.observation))
        out.append(rows)
    return out


def pairs(
    envs: dict[str, list[list[tuple[str, str, int, tuple[Any, ...]]]]], limit: int, seed: int
) -> tuple[list[str], list[tuple[int, int, bool]]]:
    """Texts, and candidate pairs (same env and stage, different episodes) with whether
    they are alike."""
    texts: list[str] = []
    where: dict[tuple[str, str], list[tuple[int, int, tuple[Any, ...]]]] = {}
    for env, eps in envs.items():
        for e, rows in enumerate(eps):
            for text, stage, _turn, key in rows:
                where.setdefault((env, stage), []).append((len(texts), e, key))
                texts.append(text)
    found = [
        (a[0], b[0], a[2] == b[2])
        for group in where.values()
        for a, b in itertools.combinations(group, 2)
        if a[1] != b[1]
    ]
    rng = random.Random(seed)
    if len(found) > limit:
        found = rng.sample(found, limit)
    return texts, found


def measure(
    encode: Callable[[list[str]], np.ndarray], texts: list[str], found: list[tuple[int, int, bool]]
) -> dict[str, Any]:
    vectors = np.asarray(encode(texts), dtype=np.float32)
    sims = np.array([float(vectors[a] @ vectors[b]) for a, b, _ in found])
    alike = np.array([same for _, _, same in found])
    table = {}
    best, best_j = THRESHOLDS[0], -1.0
    for t in THRESHOLDS:
        passed = sims >= t
        hit = float(passed[alike].mean()) if alike.any() else 0.0
        miss = float(passed[~alike].mean()) if (~alike).any() else 0.0
        table[f"{t:.2f}"] = {
            "pass": round(float(passed.mean()), 3),
            "alike_pass": round(hit, 3),
            "other_pass": round(miss, 3),
        }
        if hit - miss > best_j + 1e-9:
            best, best_j = t, hit - miss
    paper = sims >= PAPER_SIMILARITY
    return {
        "pairs": len(found),
        "alike_pairs": int(alike.sum()),
        "similarity_quantiles": {
            q: round(float(np.quantile(sims, float(q))), 3)
            for q in ("0.1", "0.25", "0.5", "0.75", "0.9")
        },
        "pass_at_0.6": round(float(paper.mean()), 3),
        "alike_pass_at_0.6": round(float(paper[alike].mean()), 3),
        "other_pass_at_0.6": round(float(paper[~alike].mean()), 3),
        "best_threshold": best,
        "best_j": round(best_j, 3),
        "by_threshold": table,
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--embedders", default="hashing,minilm")
    parser.add_argument("--episodes", type=int, default=12, help="episodes per environment")
    parser.add_argument("--pairs", type=int, default=20_000, help="candidate pairs at most")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    played = {env: episodes(env, args.episodes, args.seed) for env in ENVS}
    texts, found = pairs(played, args.pairs, args.seed)
    results: dict[str, Any] = {}
    for name in args.embedders.split(","):
        try:
            embedder = get_embedder(name)
        except ValueError as exc:
            results[name] = {"error": str(exc)}
            continue
        entry = {"embedder": embedder.name, "backend": getattr(embedder, "backend", None)}
        entry |= measure(embedder.encode, texts, found)
        entry["default_in_prime"] = SIMILARITY.get(embedder.name, PAPER_SIMILARITY)
        results[name] = entry
    print(
        json.dumps(
            {
                "benchmark": "prime_threshold",
                "envs": list(ENVS),
                "episodes_per_env": args.episodes,
                "situations": len(texts),
                "paper_threshold": PAPER_SIMILARITY,
                "embedders": results,
            },
            indent=2,
        )
    )


if __name__ == "__main__":
    main()
