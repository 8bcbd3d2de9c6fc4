"""UserRL's own environments beside rapport's ``--gym-data`` gyms, move for move.

For every test task of each gym rapport plays from a UserRL checkout, the same agent moves
(questions, wrong and right answers, a repeat, malformed moves, untagged moves, finish) are
stepped through UserRL's env class (imported from the checkout given, configured as its
``eval/eval.py`` configures it: 16 turns, TurtleGym solved at 1.0) and through rapport's
gym. Where UserRL's env asks an LLM, a fixed verdict is replayed on both sides: UserRL's
OpenAI client is replaced by one that returns the verdict in UserRL's format, and rapport's
``user`` / ``judge`` model by a scripted one that returns it in rapport's. Per-turn rewards,
the turn the episode ends at and the final score (the sum of turn rewards) are compared.

    python benchmarks/gym_differential.py --userrl CHECKOUT [--gyms function,telepathy]

Prints JSON: per gym, cases / equal / differing / not run (UserRL's env could not be built
for the task: say a data file of the checkout is missing), and the first such cases.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib
import json
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace
from typing import Any, ClassVar

from rapport.envs.gyms import load_userrl, make_userrl_gym
from rapport.llm import ModelRoles, Request, ScriptedAPI

HORIZON = 16
FOLDERS = {
    "function": ("FunctionGym", "functiongym", "FunctionEnv"),
    "telepathy": ("TelepathyGym", "telepathygym", "TelepathyEnv"),
    "turtle": ("TurtleGym", "turtlegym", "StoryEnv"),
    "intention": ("IntentionGym", "intentiongym", "IntentionEnv"),
    "persuade": ("PersuadeGym", "persuadegym", "PersuadeEnv"),
}


@dataclass
class Move:
    """One agent move and the verdict an LLM gives on it (None: no LLM is asked)."""

    text: str
    verdict: Any = None


@dataclass
class Played:
    """What one side did with a case: each turn's reward, and whether it ended there."""

    rewards: list[float] = field(default_factory=list)
    ended_at: int | None = None
    error: str = ""

    @property
    def score(self) -> float:
        return sum(self.rewards)


# The verdicts, per gym: rapport's reply to its user / judge model, and UserRL's LLM text.


def _userrl_text(env: str, move: str, verdict: Any, criteria: int) -> list[str]:
    """UserRL's LLM replies for one move (IntentionGym asks twice: reply, then coverage)."""
    if env in ("telepathy", "turtle") and move.startswith("[answer]"):
        if env == "telepathy":
            return [json.dumps({"judgment": "Yes" if verdict else "No", "feedback": "-"})]
        return [json.dumps({"scores": [{"score": g} for g in verdict]})]
    if env in ("telepathy", "turtle"):
        return [json.dumps({"response": verdict.capitalize()})]
    if env == "intention":
        covered = {"covered_detail_indices": verdict, "is_task_related": True}
        return [json.dumps({"response": "ok"}), json.dumps(covered)]
    return [json.dumps({"response": "hm", "stance": verdict.title()})]


def _rapport_reply(env: str, move: str, verdict: Any) -> str:
    if env == "telepathy" and move.startswith("[answer]"):
        return json.dumps({"correct": bool(verdict)})
    if env == "turtle" and move.startswith("[answer]"):
        return json.dumps({"scores": verdict})
    if env in ("telepathy", "turtle"):
        return json.dumps({"reply": verdict.lower()})
    if env == "intention":
        return json.dumps({"reply": "ok", "covered": [i + 1 for i in verdict]})
    return json.dumps({"reply": "hm", "stance": verdict})


def _number(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else repr(value)


def cases(env: str, task: dict[str, Any]) -> dict[str, list[Move]]:
    """The move sequences played on one task."""
    if env == "function":
        right = _number(task["expected"])
        return {
            "query, wrong, repeat, right": [
                Move("[action] 1 0 0 0"),
                Move("[answer] 123456789"),
                Move("[action] 1 0 0 0"),
                Move("[search] test"),
                Move(f"[answer] {right}"),
            ],
            "negative query, exponent answer": [
                Move("[action] -1 2 -3 4"),
                Move(f"[answer] {task['expected']:.10e}"),
            ],
            "malformed answers, then finish": [
                Move(f"Answer: {right}"),
                Move(f"[Answer] {right}"),
                Move(f"**[answer]** {right}"),
                Move(f" [answer] {right}"),
                Move("[finish]"),
            ],
        }
    if env == "telepathy":
        return {
            "question, wrong guess, untagged, right": [
                Move("[action] Is it alive?", "no"),
                Move(f"[answer] It is not {task['title']}", False),
                Move("Is it big?", "yes"),
                Move(f"[answer] {task['title']}", True),
            ],
            "repeats, then finish": [
                Move("[action] Is it alive?", "yes"),
                Move("[action] Is it alive?", "yes"),
                Move("[answer] something", False),
                Move("[finish]"),
            ],
        }
    if env == "turtle":
        n = len(task["criteria"])
        return {
            "question, partial, full": [
                Move("[action] Was it an accident?", "no"),
                Move("[answer] Part of the story.", [0.5] * n),
                Move("[answer] All of the story.", [1.0] * n),
            ],
            "untagged, weaker answer, finish": [
                Move("Was anyone else there?", "maybe"),
                Move("[answer] Half.", [1.0] + [0.0] * (n - 1)),
                Move("[answer] Less.", [0.0] * n),
                Move("[finish]"),
            ],
        }
    if env == "intention":
        n = len(task["details"])
        return {
            "one, two, none, untagged, search, finish": [
                Move("[action] What is it for?", [0]),
                Move("[action] When and where?", [0, 1] if n > 2 else [0]),
                Move("[action] Do you like tea?", []),
                Move("What budget?", [0]),
                Move("[search] options", []),
                Move("[FINISH]"),
            ],
        }
    return {
        "arguments": [
            Move("[action] Evidence says otherwise.", "partly agree"),
            Move("Think of the cost.", "agree"),
            Move("[search] studies", "strongly disagree"),
        ]
    }


async def play_rapport(env: str, task: dict[str, Any], moves: list[Move]) -> Played:
    queue = [_rapport_reply(env, m.text, m.verdict) for m in moves if m.verdict is not None]

    def reply(request: Request) -> str:
        return queue.pop(0) if queue else json.dumps({"reply": "maybe"})

    model = ModelRoles({"all": ScriptedAPI(responder=reply)}).get("user")
    gym = make_userrl_gym(env, task, horizon=HORIZON, split="eval")
    gym.reset(0)
    played = Played()
    for turn, move in enumerate(moves):
        step = await gym.astep(move.text, model)
        played.rewards.append(step.reward)
        if step.done:
            played.ended_at = turn
            break
    return played


class _Client:
    """UserRL's OpenAI client, replaced: each call returns the next replayed verdict."""

    queue: ClassVar[list[str]] = []

    def __init__(self, **_: Any) -> None:
        self.chat = SimpleNamespace(completions=SimpleNamespace(create=self._create))

    async def _create(self, **_: Any) -> Any:
        text = _Client.queue.pop(0) if _Client.queue else "{}"
        message = SimpleNamespace(content=text, tool_calls=None)
        return SimpleNamespace(choices=[SimpleNamespace(message=message)])


def userrl_env(env: str) -> Callable[[str], Any]:
    """A factory of UserRL's env class for a task id, configured as eval/eval.py does."""
    _, package, cls_name = FOLDERS[env]
    module = importlib.import_module(package)
    prompts = importlib.import_module(f"{package}.env.prompts") if env != "function" else None
    if prompts is not None:
        if hasattr(prompts, "AsyncOpenAI"):
            prompts.AsyncOpenAI = _Client
        if hasattr(prompts, "openai"):
            prompts.openai = SimpleNamespace(AsyncOpenAI=_Client)

    def build(gold: str) -> Any:
        config = module.get_default_config()
        config.max_steps, config.data_mode, config.data_source = HORIZON, "single", gold
        if hasattr(config, "api_key"):
            config.api_key = "unused: verdicts are replayed"  # its validation wants one
        if env == "turtle":
            config.success_threshold = 1.0
        instance = getattr(module, cls_name)(config=config)
        instance.reset()
        return instance

    return build


async def play_userrl(
    env: str, build: Callable[[str], Any], gold: str, moves: list[Move], criteria: int
) -> Played:
    played = Played()
    try:
        instance = build(gold)
    except Exception as exc:  # the env class could not be built for this task
        played.error = f"{type(exc).__name__}: {exc}"[:200]
        return played
    _Client.queue = [
        text
        for m in moves
        if m.verdict is not None
        for text in _userrl_text(env, m.text, m.verdict, criteria)
    ]
    for turn, move in enumerate(moves):
        _obs, reward, terminated, truncated, _info = await instance.step_async(move.text)
        played.rewards.append(float(reward))
        if terminated or truncated:
            played.ended_at = turn
            break
    return played


def _differs(a: Played, b: Played) -> str:
    if a.error or b.error:
        return a.error or b.error
    if a.rewards != b.rewards:
        return f"turn rewards {a.rewards} (UserRL) vs {b.rewards} (rapport)"
    if a.ended_at != b.ended_at:
        return f"ended at turn {a.ended_at} (UserRL) vs {b.ended_at} (rapport)"
    return ""


async def compare(checkout: Path, env: str) -> dict[str, Any]:
    folder, _, _ = FOLDERS[env]
    sys.path.insert(0, str(checkout / "gyms" / folder))
    try:
        build = userrl_env(env)
        tasks = load_userrl(checkout, [env])[env].test
    except Exception as exc:  # the checkout's env or data cannot be loaded
        return {"gym": env, "ran": False, "why": f"{type(exc).__name__}: {exc}"[:300]}
    row: dict[str, Any] = {
        "gym": env,
        "ran": True,
        "cases": 0,
        "equal": 0,
        "differing": 0,
        "not_run": 0,
    }
    examples: list[dict[str, str]] = []
    for task in tasks:
        gold = task["id"]
        n = len(task.get("criteria", []))
        for name, moves in cases(env, task).items():
            theirs = await play_userrl(env, build, gold, moves, n)
            ours = await play_rapport(env, task, moves)
            why = _differs(theirs, ours)
            row["cases"] += 1
            row["not_run" if theirs.error else "differing" if why else "equal"] += 1
            if why and len(examples) < 5:
                examples.append({"task": gold, "case": name, "why": why})
    row["examples"] = examples
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--userrl", type=Path, required=True, help="a UserRL checkout")
    parser.add_argument("--gyms", default=",".join(FOLDERS))
    args = parser.parse_args()
    if not (args.userrl / "gyms").is_dir():
        parser.error(f"--userrl {args.userrl}: not a UserRL checkout (no gyms/ folder)")
    rows = [asyncio.run(compare(args.userrl, env)) for env in args.gyms.split(",")]
    print(json.dumps({"horizon": HORIZON, "gyms": rows}, indent=1))


if __name__ == "__main__":
    main()
