"""MultiSessionCollab's own runner beside rapport's, timed on one loopback server, without
memory and with MSC's reflection; prints one JSON object (times, ratio, results equal?).

Both runners play the differential's replayed conversations (``msc_differential.py``: the
same server, cases and replies) on one dataset: without memory (rapport: ``--memory
none``) and with MSC's reflective agent (rapport: ``--memory reflection --prompts-from
CHECKOUT``). The server answers every call after ``--latency`` seconds. MSC plays
``--batch-size`` users at once and, without memory, each user's sessions ``--batch-size`` at
a time; rapport runs with ``--concurrency`` (default: the batch size squared, the most
conversations MSC has open at once). Each runner is timed around its own call, after both
sides' code is imported. The results are compared as the differential compares them (Len,
UE, final draft, TS and every message of every session; with memory the notes after every
session and every prompt the agent was sent too).

    python benchmarks/msc_speed.py --checkout PATH/multisessioncollab \\
        [--dataset mmlu] [--users 4] [--max-turns 5] [--latency 0.2] [--repeats 1]

MSC's code needs ``litellm`` and ``json_repair`` importable (see ``msc_differential.py``).
"""

from __future__ import annotations

import argparse
import importlib
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import msc_differential as diff
from rapport.llm._loopback import LoopbackSettings, run_loopback
from rapport.memory import load_msc_notes_prompts


def parse(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--checkout", required=True, help="a MultiSessionCollab checkout")
    parser.add_argument("--dataset", default="mmlu")
    parser.add_argument("--users", type=int, default=4)
    parser.add_argument("--max-turns", type=int, default=5)
    parser.add_argument("--latency", type=float, default=0.2, help="seconds before each reply")
    parser.add_argument("--batch-size", type=int, default=4, help="MSC's batch_size")
    parser.add_argument("--concurrency", type=int, default=None, help="rapport's --concurrency")
    parser.add_argument("--repeats", type=int, default=1, help="timed runs of each side")
    parser.add_argument("--out", default=None, help="where the runs go (default: a temp dir)")
    args = parser.parse_args(argv)
    root = Path(args.checkout) / "collaborativeagents"
    cache = args.dataset.replace("math-hard", "math_hard")
    args.cache_folder = root / "datasets" / "cache" / cache
    args.profiles_path = str(root / "user_profiles" / "user_profiles.json")
    args.concurrency = args.concurrency or args.batch_size**2
    return args


def import_both(checkout: Path) -> None:
    """Import MSC's runner and rapport's benchmark before anything is timed."""
    diff.stub_missing(["datasets", "human_eval.execution", "bigcodebench.eval"])
    sys.path.insert(0, str(checkout))
    importlib.import_module("run")
    importlib.import_module("collaborativeagents.conversation_evaluator")
    importlib.import_module("rapport.envs.collab")


def one_round(args: argparse.Namespace, problems: list[str], out: Path) -> dict[str, Any]:
    """Both runners once on one server: their wall times and the comparison."""
    checkout = Path(args.checkout)
    opening = None
    if args.reflection:
        opening = load_msc_notes_prompts(checkout).update.split("\n", 1)[0]
    first = 1 if args.reflection else 0
    replay = diff.Replay(problems, opening, first)
    settings = LoopbackSettings(latency_s=args.latency, idle_timeout_s=600.0)
    out.mkdir(parents=True, exist_ok=True)
    with run_loopback(settings, responder=replay) as server:
        start = time.perf_counter()
        msc = diff.run_msc(checkout, args, server.base_url, out)
        msc_s = time.perf_counter() - start
        start = time.perf_counter()
        ours = diff.run_rapport(args, server.base_url, out)
        rapport_s = time.perf_counter() - start
    result = diff.compare(diff.msc_rows(msc, problems), diff.rapport_rows(*ours), first)
    equal = not result["differing"] and all(
        n == result["sessions"] for n in result["equal"].values()
    )
    if args.reflection:
        prompts = diff.compare_prompts(replay.agent_prompts)
        equal = equal and prompts["msc"] == prompts["rapport"] == prompts["equal"]
    return {"msc_s": msc_s, "rapport_s": rapport_s, "equal": equal, "sessions": result["sessions"]}


def condition(args: argparse.Namespace, problems: list[str], out: Path) -> dict[str, Any]:
    """``--repeats`` rounds of one condition, summarized by their medians."""
    rounds = [one_round(args, problems, out / f"round{r}") for r in range(args.repeats)]
    msc = statistics.median(r["msc_s"] for r in rounds)
    ours = statistics.median(r["rapport_s"] for r in rounds)
    return {
        "msc_s": [round(r["msc_s"], 2) for r in rounds],
        "rapport_s": [round(r["rapport_s"], 2) for r in rounds],
        "ratio": round(ours / msc, 3),
        "results_equal": all(r["equal"] for r in rounds),
        "sessions": rounds[0]["sessions"],
    }


def main(argv: list[str]) -> int:
    args = parse(argv)
    cache_file = args.cache_folder / "testset_size20_seed42.json"
    if not cache_file.is_file():
        print(f"msc_speed: {cache_file} not found (give a MSC checkout)", file=sys.stderr)
        return 2
    problems = [row["problem"] for row in json.loads(cache_file.read_text(encoding="utf-8"))]
    out = Path(args.out or tempfile.mkdtemp(prefix="msc-speed-"))
    import_both(Path(args.checkout))
    conditions = {}
    for name, reflection in (("none", False), ("reflection", True)):
        args.reflection = reflection
        conditions[name] = condition(args, problems, out / name)
    print(
        json.dumps(
            {
                "dataset": args.dataset,
                "users": args.users,
                "sessions_per_user": 20,
                "max_turns": args.max_turns,
                "latency_s": args.latency,
                "msc_batch_size": args.batch_size,
                "rapport_concurrency": args.concurrency,
                "conditions": conditions,
            },
            indent=1,
        )
    )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
