"""Speed of the embedded llama.cpp provider: prompt and generation tokens per second, the
time of a second conversation turn when another conversation ran in between, with and without
restoring saved states (the prefix cache), and batched decoding: K calls in flight decoded
together (K = 1, 2, 4, 8), with aggregate and per-sequence generation tokens per second, peak
RSS, and how many of the K answers differ from the same call decoded alone. Prints one JSON
object.

Run it alone (one llama.cpp process at a time):
    python benchmarks/llm_speed.py [--model SPEC] [--batched 1,2,4,8] [--gen-tokens 64]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import resource
import sys
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
    engine.reset()
    prompt = _request(AGENT_SYSTEM + USER_SYSTEM, ["Say OK."], max_tokens=1)
    prompt_s, done = _timed(engine, prompt)
    engine.reset()
    long_answer = _request("You are helpful.", ["Count from 1 to 100, comma separated."], 128)
    short = long_answer.model_copy(update={"config": GenerateConfig(max_tokens=1, seed=1)})
    first_s, _ = _timed(engine, short)
    engine.reset()
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
    engine.reset()
    cache = engine.prefix_cache
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


def _counting(n: int, max_tokens: int) -> Request:
    ask = f"Count from {100 * n + 1} upward, one number per line, no other words."
    return _request("You are helpful.", [ask], max_tokens)


def measure_batched(engine: Any, k: int, gen_tokens: int, alone: dict[int, str]) -> dict[str, Any]:
    """K calls decoded together: generation speed, aggregate and per sequence."""
    requests = [_counting(n, gen_tokens) for n in range(k)]
    firsts = [
        r.model_copy(update={"config": GenerateConfig(max_tokens=1, seed=1)}) for r in requests
    ]
    engine.reset()
    started = time.perf_counter()
    engine.complete_many(firsts)  # prompts and first tokens
    first_s = time.perf_counter() - started
    engine.reset()
    steps, stepped = engine.decoder.steps, engine.decoder.stepped_tokens
    started = time.perf_counter()
    outs = engine.complete_many(requests)
    total_s = time.perf_counter() - started
    generated = sum(o.usage.completion_tokens - 1 for o in outs)
    aggregate = generated / max(total_s - first_s, 1e-6)
    differ = sum(out.text != alone.get(n, out.text) for n, out in enumerate(outs))
    return {
        "k": k,
        "gen_tokens": generated,
        "wall_s": round(total_s, 2),
        "aggregate_gen_tok_per_s": round(aggregate, 1),
        "per_sequence_gen_tok_per_s": round(aggregate / k, 1),
        "mean_batch": round(
            (engine.decoder.stepped_tokens - stepped) / max(engine.decoder.steps - steps, 1), 2
        ),
        "differ_from_alone": differ,
        "max_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024),
    }


def measure_alone(engine: Any, k: int, gen_tokens: int) -> dict[int, str]:
    """Each of the K calls decoded by itself (to compare batched answers with)."""
    texts = {}
    for n in range(k):
        engine.reset()
        texts[n] = engine.complete(_counting(n, gen_tokens)).text
    return texts


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--model", default="llamacpp/qwen2.5-coder-1.5b")
    parser.add_argument("--batched", default="1,2,4,8", help="K values; empty skips")
    parser.add_argument("--gen-tokens", type=int, default=64)
    parser.add_argument("--skip-turn2", action="store_true", help="skip the prefix-reuse rows")
    args = parser.parse_args()
    ks = [int(k) for k in args.batched.split(",") if k]
    api = create_api(args.model, n_ctx=2048, parallel=max(ks, default=1))
    started = time.perf_counter()
    engine = api.engine()  # type: ignore[attr-defined]
    load_s = time.perf_counter() - started
    result: dict[str, Any] = {"model": args.model, "load_s": round(load_s, 2)}
    result.update(measure_throughput(engine))
    _progress(result)
    if not args.skip_turn2:
        without = measure_turn2(engine, reuse=False)
        with_reuse = measure_turn2(engine, reuse=True)
        result["turn2_without_reuse_s"] = without["turn2_s"]
        result["turn2_with_reuse_s"] = with_reuse["turn2_s"]
        result["turn2_prompt_tokens"] = with_reuse["turn2_prompt_tokens"]
        result["turn2_same_text"] = without["text"] == with_reuse["text"]
        result["saved_states"] = with_reuse["saved_states"]
        result["saved_states_mb"] = with_reuse["saved_mb"]
        _progress(result)
    result["max_rss_mb"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)
    alone = measure_alone(engine, max(ks, default=0), args.gen_tokens)
    result["batched"] = []
    for k in ks:
        result["batched"].append(measure_batched(engine, k, args.gen_tokens, alone))
        _progress(result["batched"][-1])
    print(json.dumps(result, indent=2))


def _progress(part: dict[str, Any]) -> None:
    """Each part as it is measured, on stderr (a run cut short still shows what it got)."""
    print(json.dumps(part), file=sys.stderr, flush=True)


if __name__ == "__main__":
    asyncio.run(main())
