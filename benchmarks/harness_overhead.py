"""Overhead of the harness itself: scripted turns (zero-latency model) through the real runner
and store, per turn. A turn is one user message and one agent reply. Prints one JSON object.

    python benchmarks/harness_overhead.py [--users 20] [--sessions 25] [--max-turns 10]
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time
from pathlib import Path
from typing import Any

from rapport.envs import BENCHMARKS
from rapport.eval import ExperimentConfig, run
from rapport.llm import ModelRoles, Request, ScriptedAPI
from rapport.store import SqliteCache


def _reply(request: Request) -> str:
    return "Sure: here is a short answer about " + request.messages[-1].content[:40]


def measure(users: int, sessions: int, max_turns: int, *, cached: bool) -> dict[str, Any]:
    """Run the scripted benchmark under two conditions; time it per turn."""
    with tempfile.TemporaryDirectory() as tmp:
        config = ExperimentConfig(
            benchmark="scripted",
            memory=["none", "oracle"],
            users=users,
            sessions=sessions,
            max_turns=max_turns,
            run_dir=Path(tmp) / "run",
            cache=cached,
        )
        cache = SqliteCache(Path(tmp) / "cache.sqlite") if cached else None
        models = ModelRoles({"all": ScriptedAPI(responder=_reply)}, cache=cache)
        started = time.perf_counter()
        result = run(config, models=models, progress=False)
        elapsed = time.perf_counter() - started
        db_bytes = os.path.getsize(Path(tmp) / "run" / "run.sqlite")
    turns = 2 * users * sessions * max_turns
    return {
        "cache": cached,
        "turns": turns,
        "sessions": result.sessions_run,
        "model_calls": result.model_calls,
        "seconds": round(elapsed, 3),
        "ms_per_turn": round(1000 * elapsed / turns, 4),
        "ms_per_session": round(1000 * elapsed / result.sessions_run, 3),
        "run_sqlite_bytes": db_bytes,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--users", type=int, default=20)
    parser.add_argument("--sessions", type=int, default=25)
    parser.add_argument("--max-turns", type=int, default=10)
    args = parser.parse_args()
    BENCHMARKS.setdefault("scripted", "rapport.eval:ScriptedBenchmark")
    results = [
        measure(args.users, args.sessions, args.max_turns, cached=cached)
        for cached in (False, True)
    ]
    print(json.dumps({"target_ms_per_turn": 2.0, "runs": results}, indent=2))


if __name__ == "__main__":
    main()
