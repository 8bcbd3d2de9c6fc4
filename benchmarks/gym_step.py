"""Time one gym step per environment (code only, no model): prints JSON, target < 1 ms."""

from __future__ import annotations

import json
import random
import time

from rapport.envs.gyms import make_gym

MOVES = {
    "function": ["[action] f(1, 2, 3, 4)", "[action] f(-3, 0, 7, 2)"],
    "telepathy": ["[action] Is it an animal?", "[action] Is it bigger than a car?"],
    "turtle": ["[action] Did someone die?", "[action] Was it raining?"],
    "intention": ["[action] What is your budget?", "[action] Who is it for?"],
    "travel": ["[search] hotels", "[action] Does price matter?"],
    "persuade": ["[action] Studies show it saves money.", "[action] It is optional."],
    "search": ["[search] founder of Vaan Foods", "[search] headquarters"],
    "tau": ['[action] {"name": "get_user_details", "arguments": {"user_id": "x"}}'],
}


def time_env(name: str, steps: int = 400) -> dict[str, float]:
    gym = make_gym(name, horizon=10**9)
    gym.reset(0)
    moves, rng = MOVES[name], random.Random(0)
    for move in moves:  # warm caches (indexes, parsed data)
        gym.step(move)
    samples = []
    for _ in range(steps):
        move = rng.choice(moves)
        start = time.perf_counter()
        gym.step(move)
        samples.append(time.perf_counter() - start)
    samples.sort()
    return {
        "mean_ms": 1000 * sum(samples) / len(samples),
        "p50_ms": 1000 * samples[len(samples) // 2],
        "p95_ms": 1000 * samples[int(len(samples) * 0.95)],
    }


def main() -> None:
    results = {}
    for name in MOVES:
        try:
            results[name] = time_env(name, steps=100 if name == "tau" else 400)
        except ImportError as exc:
            results[name] = {"skipped": str(exc)}  # type: ignore[dict-item]
    worst = max(r.get("mean_ms", 0.0) for r in results.values())
    print(
        json.dumps(
            {
                "benchmark": "gym_step",
                "target_ms": 1.0,
                "per_env": results,
                "worst_mean_ms": worst,
                "meets_target": worst < 1.0,
            },
            indent=2,
        )
    )


if __name__ == "__main__":
    main()
