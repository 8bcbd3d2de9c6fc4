"""Does the same command, run twice from scratch, store the same run? Prints one JSON object.

Runs ``rapport run collab`` twice into fresh run dirs with the response cache off, so every
model call is decoded again, at ``--concurrency K`` on the embedded model (K sequences decoded
together in lockstep, see docs/batched-decoding.md). Then compares every stored session field
by field. Wall-clock fields (``started_at``, ``finished_at``, each call's ``latency_s``) are
expected to differ and are listed apart; anything else that differs is a failure of
repeatability.

Run it alone (one llama.cpp process at a time):
    python benchmarks/batched_repeat.py [--model SPEC] [--users 4] [--concurrency 4]
        [--max-turns 2] [--memory none]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from rapport.store import RunStore

CLOCK_FIELDS = {"started_at", "finished_at", "latency_s"}
"""Fields that hold wall-clock readings: they differ between any two runs."""


def differences(a: Any, b: Any, path: str = "") -> list[str]:
    """Paths (``.usage[0].latency_s``) at which two JSON values differ."""
    if isinstance(a, dict) and isinstance(b, dict):
        return [
            d
            for k in sorted(set(a) | set(b))
            for d in differences(a.get(k), b.get(k), f"{path}.{k}")
        ]
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        return [
            d
            for i, (x, y) in enumerate(zip(a, b, strict=True))
            for d in differences(x, y, f"{path}[{i}]")
        ]
    return [] if a == b else [path]


def stored(run_dir: Path) -> dict[tuple[str, str, int], dict[str, Any]]:
    """Each stored session as JSON, by (condition, user, index)."""
    with RunStore(run_dir, create=False) as store:
        return {
            (r.condition, r.user_id, r.index): json.loads(r.model_dump_json())
            for r in store.sessions()
        }


def run_once(args: argparse.Namespace, run_dir: Path) -> float:
    command = [sys.executable, "-m", "rapport", "run", "collab", "--run-dir", str(run_dir)]
    command += ["--users", str(args.users), "--sessions", "1", "--memory", args.memory]
    command += ["--max-turns", str(args.max_turns), "--concurrency", str(args.concurrency)]
    command += ["--model", f"all={args.model}", "--seed", "0", "--no-cache", "--no-progress"]
    started = time.perf_counter()
    subprocess.run(command, check=True, capture_output=True, text=True)
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--model", default="llamacpp/qwen2.5-coder-0.5b")
    parser.add_argument("--users", type=int, default=4)
    parser.add_argument("--concurrency", type=int, default=4)
    parser.add_argument("--max-turns", type=int, default=2)
    parser.add_argument("--memory", default="none")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        walls = [run_once(args, Path(tmp) / f"run{n}") for n in (1, 2)]
        first, second = stored(Path(tmp) / "run1"), stored(Path(tmp) / "run2")
    clock: set[str] = set()
    other: dict[str, list[str]] = {}
    for key in sorted(set(first) | set(second)):
        paths = differences(first.get(key), second.get(key))
        clock.update(p.rsplit(".", 1)[-1] for p in paths if p.rsplit(".", 1)[-1] in CLOCK_FIELDS)
        rest = [p for p in paths if p.rsplit(".", 1)[-1] not in CLOCK_FIELDS]
        if rest:
            other["/".join(map(str, key))] = rest[:10]
    turns = sum(len(s["turns"]) for s in first.values())
    calls = sum(len(s["usage"]) for s in first.values())
    print(
        json.dumps(
            {
                "model": args.model,
                "concurrency": args.concurrency,
                "sessions": len(first),
                "turns": turns,
                "model_calls": calls,
                "wall_s": [round(w, 1) for w in walls],
                "clock_fields_that_differ": sorted(clock),
                "sessions_differing_otherwise": len(other),
                "differences": other,
            },
            indent=2,
        )
    )


if __name__ == "__main__":
    main()
