"""Which checkable collab preferences a model follows when it is told them, and which it
meets without being told. Prints one JSON object.

For each preference a deterministic checker decides, the agent answers the opening message
of a few generated training-split problems twice: once with no memory, once with that one
preference in its system prompt as the ``oracle`` memory words it (``--told-in turn``: in a
system message after the user's opening instead, where per-turn recall goes). The checker
judges each first reply. A preference the model meets at the same rate told or untold cannot show
adaptation on that model, whatever the memory does.

Run it alone (one llama.cpp process at a time):
    python benchmarks/collab_followable.py [--model SPEC] [--problems N] [--concurrency K]
        [--told-in system|turn]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from typing import Literal

from rapport.agents import Agent
from rapport.envs.collab import RuleUser, check_preference, load_taxonomy, truth_text
from rapport.envs.collab._generated import generate_problems
from rapport.envs.collab._session import agent_prompt, problem_text
from rapport.llm import GenerateConfig, Message, ModelRoles

TRAIN_SEED = 1_000_003
"""Problems drawn apart from the demo's (seed 0), so the choice never sees its sessions."""


async def first_reply(
    agent: Agent, opening: str, told: str, seed: int, told_in: Literal["system", "turn"]
) -> str:
    config = GenerateConfig(temperature=0.7, top_p=0.95, seed=seed)
    output = await agent.respond(
        [Message(role="user", content=opening)],
        instructions=agent_prompt("agent"),
        memory_context=told if told_in == "system" else "",
        recall=told if told_in == "turn" else "",
        config=config,
    )
    return output.text


async def measure(
    model: str, n_problems: int, concurrency: int, told_in: Literal["system", "turn"] = "system"
) -> dict[str, object]:
    taxonomy = load_taxonomy("collab")
    roles = ModelRoles({"all": model}, seed=0)
    roles.set_concurrency(concurrency)
    agent = Agent(roles.get("agent"))
    problems = generate_problems(n_problems, seed=TRAIN_SEED)
    rows: dict[str, dict[str, float]] = {}
    for pref in taxonomy.preferences:
        if pref.checker is None:
            continue
        told_text = truth_text([pref])
        passed = {"untold": 0, "told": 0}
        calls = []
        for i, problem in enumerate(problems):
            user = RuleUser(
                persona="",
                problem=problem_text(problem),
                preferences=[pref],
                extract=lambda text: None,
                seed=f"{pref.id}:{i}",
            )
            opening = await user.opening()
            for arm, context in (("untold", ""), ("told", told_text)):
                calls.append((arm, first_reply(agent, opening, context, i, told_in)))
        # Every reply of a preference is in flight at once: the embedded engine decodes
        # up to `concurrency` of them together.
        replies = await asyncio.gather(*(call for _, call in calls))
        for (arm, _), reply in zip(calls, replies, strict=True):
            passed[arm] += bool(check_preference(pref.id, reply))
        rows[pref.id] = {
            "category": pref.category,
            "untold": round(passed["untold"] / len(problems), 3),
            "told": round(passed["told"] / len(problems), 3),
        }
        print(pref.id, rows[pref.id], file=sys.stderr, flush=True)
    return {
        "model": model,
        "problems": n_problems,
        "concurrency": concurrency,
        "told_in": told_in,
        "preferences": rows,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="llamacpp/qwen2.5-coder-0.5b")
    parser.add_argument("--problems", type=int, default=4)
    parser.add_argument(
        "--concurrency", type=int, default=1, help="replies decoded together (embedded model)"
    )
    parser.add_argument(
        "--told-in",
        choices=("system", "turn"),
        default="system",
        help="where the told preference goes: the system prompt (as the oracle memory puts "
        "it) or a system message after the opening (where per-turn recall goes)",
    )
    args = parser.parse_args()
    started = time.perf_counter()
    result = asyncio.run(measure(args.model, args.problems, args.concurrency, args.told_in))
    result["wall_s"] = round(time.perf_counter() - started, 1)
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
