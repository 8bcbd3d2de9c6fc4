"""Time PRIME retrieval over a 10,000-experience library: prints JSON, target < 20 ms.

Experiences and queries are situations in retrieval's compact form (as distillation and a
live turn write them). Measured: embedding the query + stage/env prefilter + similarity +
top-20 (the selection model's call is model time and is excluded). ``--embedder hashing|auto``.
"""

from __future__ import annotations

import argparse
import json
import random
import time

from rapport.memory import get_embedder
from rapport.memory.prime import (
    Conditions,
    Experience,
    ExperienceLibrary,
    Stage,
    compact_situation,
)

ENVS = ("function", "telepathy", "turtle", "intention", "travel", "persuade", "search", "tau")
STAGES: tuple[Stage, ...] = ("exploration", "verification", "completion")
ZONES = ("golden", "warning", "preference")
WORDS = (
    "ask",
    "narrow",
    "budget",
    "guess",
    "query",
    "rule",
    "hotel",
    "price",
    "animal",
    "search",
    "answer",
    "confirm",
    "user",
    "story",
    "key",
    "detail",
    "stance",
    "evidence",
)


def situation(rng: random.Random, env: str, stage: str) -> str:
    """A live-turn situation in retrieval's compact form, from random moves and replies."""
    exchanges = [
        ("[action] " + " ".join(rng.choices(WORDS, k=4)) + "?", rng.choice(("yes", "no", "unsure")))
        for _ in range(rng.randint(0, 3))
    ]
    return compact_situation(env, stage, exchanges)


def build(n: int, encode: object) -> ExperienceLibrary:
    rng = random.Random(0)
    lib = ExperienceLibrary()
    for i in range(n):
        text = " ".join(rng.choices(WORDS, k=8))
        env, stage = rng.choice(ENVS), rng.choice(STAGES)
        lib.add(
            Experience(
                id=f"exp-{i}",
                situation=text,
                action="act",
                outcome="ok",
                lesson=" ".join(rng.choices(WORDS, k=6)),
                stage=stage,
                zone=rng.choice(ZONES),
                conditions=Conditions(envs=[env]),
                state=situation(rng, env, stage),
            )
        )
    return lib


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--embedder", default="hashing")
    parser.add_argument("--size", type=int, default=10_000)
    parser.add_argument("--queries", type=int, default=50)
    args = parser.parse_args()
    embedder = get_embedder(args.embedder)
    lib = build(args.size, embedder.encode)
    start = time.perf_counter()
    lib.candidates(
        "telepathy",
        "exploration",
        embedder.encode(["warm"])[0],
        embedder.encode,
        min_similarity=0.0,
    )
    index_s = time.perf_counter() - start
    rng, total, search, found = random.Random(1), [], [], 0
    for _ in range(args.queries):
        env, stage = rng.choice(ENVS), rng.choice(STAGES)
        query = situation(rng, env, stage)
        t0 = time.perf_counter()
        vec = embedder.encode([query])[0]
        t1 = time.perf_counter()
        hits = lib.candidates(env, stage, vec, embedder.encode, min_similarity=0.6, limit=20)
        t2 = time.perf_counter()
        total.append(t2 - t0)
        search.append(t2 - t1)
        found += len(hits)
    mean_ms = 1000 * sum(total) / len(total)
    print(
        json.dumps(
            {
                "benchmark": "prime_retrieval",
                "embedder": embedder.name,
                "library_size": args.size,
                "target_ms": 20.0,
                "index_build_s": round(index_s, 3),
                "mean_ms": round(mean_ms, 3),
                "p95_ms": round(1000 * sorted(total)[int(len(total) * 0.95)], 3),
                "mean_prefilter_search_ms": round(1000 * sum(search) / len(search), 3),
                "mean_query_encode_ms": round(mean_ms - 1000 * sum(search) / len(search), 3),
                "mean_candidates": found / len(total),
                "meets_target": mean_ms < 20.0,
            },
            indent=2,
        )
    )


if __name__ == "__main__":
    main()
