"""Speed of the embedded llama.cpp provider: prompt and generation tokens per second, and the
time of a second conversation turn when another conversation ran in between, with and without
restoring saved contexts (the prefix cache). Prints one JSON object.

Run it alone (one llama.cpp process at a time):  python benchmarks/llm_speed.py [--model SPEC]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import resource
import time
from typing import Any

from rapport.llm import GenerateConfig, Message, Request, create_api

AGENT_SYSTEM = (
    "You are a careful coding assistant. Follow the user's stated preferences about "
    "formatting, length and tone. " * 12
)
USER_SYSTEM = (
    "You play a software engineer who asks for help with a small Python task and reacts "
    "briefly to each answer, saying what you liked and what you did not. " * 12
)


def _request(system: str, turns: list[str], max_tokens: int) -> Request:
    messages = [Message(role="system", content=system)]
    for i, text in enumerate(turns):
        messages.append(Message(role="user" if i % 2 == 0 else "assistant", content=text))
    return Request(messages=messages, config=GenerateConfig(max_tokens=max_tokens, seed=1))


def _timed(engine: Any, request: Request) -> tuple[float, Any]:
    started = time.perf_counter()
    completion = engine.complete(request)
    return time.perf_counter() - started, completion


def measure_throughput(engine: Any) -> dict[str, float]:
    """Prompt tok/s from a cold long prompt; generation tok/s from a long answer."""
    engine.llm.reset()
    prompt = _request(AGENT_SYSTEM + USER_SYSTEM, ["Say OK."], max_tokens=1)
    prompt_s, done = _timed(engine, prompt)
    engine.llm.reset()
    long_answer = _request("You are helpful.", ["Count from 1 to 100, comma separated."], 128)
    short = long_answer.model_copy(update={"config": GenerateConfig(max_tokens=1, seed=1)})
    first_s, _ = _timed(engine, short)
    engine.llm.reset()
    total_s, gen = _timed(engine, long_answer)
    generated = gen.usage.completion_tokens - 1
    return {
        "prompt_tokens": done.usage.prompt_tokens,
        "prompt_tok_per_s": round(done.usage.prompt_tokens / prompt_s, 1),
        "gen_tokens": generated,
        "gen_tok_per_s": round(generated / max(total_s - first_s, 1e-6), 1),
    }


def measure_turn2(engine: Any, *, reuse: bool) -> dict[str, Any]:
    """Agent turn 1, simulated-user turn 1, then the timed agent turn 2."""
    engine.llm.reset()
    cache = engine.prefix_cache
    cache._states.clear()
    saved_capacity = cache.capacity_bytes
    cache.capacity_bytes = saved_capacity if reuse else 0
    try:
        agent1 = _request(AGENT_SYSTEM, ["Write a function that reverses a string."], 48)
        first = engine.complete(agent1)
        engine.complete(_request(USER_SYSTEM, ["Here is the answer: " + first.text], 48))
        agent2 = _request(
            AGENT_SYSTEM,
            ["Write a function that reverses a string.", first.text, "Shorter, please."],
            48,
        )
        seconds, second = _timed(engine, agent2)
    finally:
        cache.capacity_bytes = saved_capacity
    return {
        "turn2_s": round(seconds, 2),
        "turn2_prompt_tokens": second.usage.prompt_tokens,
        "saved_states": len(cache),
        "saved_mb": round(cache.size_bytes / 2**20, 1),
        "text": second.text,
    }


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--model", default="llamacpp/qwen2.5-coder-1.5b")
    args = parser.parse_args()
    api = create_api(args.model)
    started = time.perf_counter()
    engine = api.engine()  # type: ignore[attr-defined]
    load_s = time.perf_counter() - started
    result: dict[str, Any] = {"model": args.model, "load_s": round(load_s, 2)}
    result.update(measure_throughput(engine))
    without = measure_turn2(engine, reuse=False)
    with_reuse = measure_turn2(engine, reuse=True)
    result["turn2_without_reuse_s"] = without["turn2_s"]
    result["turn2_with_reuse_s"] = with_reuse["turn2_s"]
    result["turn2_prompt_tokens"] = with_reuse["turn2_prompt_tokens"]
    result["turn2_same_text"] = without["text"] == with_reuse["text"]
    result["saved_states"] = with_reuse["saved_states"]
    result["saved_states_mb"] = with_reuse["saved_mb"]
    result["max_rss_mb"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    asyncio.run(main())
