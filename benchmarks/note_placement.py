"""Where a small model acts on a memory's text: in the system prompt or next to the latest
message. Prints one JSON object.

Runs the demo's experiment (MPT recall on generated users, seed 0, history sessions first)
twice over the same users and instances, once with every memory's text in the system prompt
(``notes_in: system``) and once in a system message right after the latest message
(``notes_in: turn``), under ``none``, ``oracle`` (the user's preferences in words, a note
written once per session) and ``rag`` (past sessions retrieved for the request). For each
memory and placement it reports the share of instances whose preference argument the agent
set to the user's value (``focal_em``), F1 over the arguments the request and preferences fix
(the demo's measure) and P-EM, with the paired turn - system difference per memory (users
are the unit, 95% bootstrap CI).

Run it alone (one llama.cpp process at a time):
    python benchmarks/note_placement.py [--model SPEC] [--users N] [--out DIR]
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

import numpy as np

from rapport._stats import bootstrap_interval
from rapport.eval import ExperimentConfig, run
from rapport.store import RunStore

MEMORIES = ["none", "oracle", "rag"]
PLACEMENTS = ("system", "turn")
MEASURES = ("focal_em", "f1", "p_em")


def config(run_dir: Path, model: str, users: int, placement: str) -> ExperimentConfig:
    """The demo's MPT recall experiment with every memory's text placed at `placement`."""
    return ExperimentConfig(
        benchmark="mpt",
        memory=MEMORIES,
        users=users,
        seed=0,
        run_dir=run_dir,
        models={"all": model},
        options={
            "challenges": ["recall"],
            "per_cell": 1,
            "sessions_min": 4,
            "sessions_max": 4,
            "drift": 0.0,
        },
        memory_options={m: {"notes_in": placement} for m in MEMORIES if m != "none"},
    )


def per_user(run_dir: Path) -> dict[str, dict[str, dict[str, float]]]:
    """condition -> user -> measure -> mean over the user's evaluation instances."""
    values: dict[tuple[str, str, str], list[float]] = defaultdict(list)
    with RunStore.open_readonly(run_dir) as store:
        for record in store.sessions():
            if record.split != "eval" or record.status != "ok":
                continue
            for measure in MEASURES:
                if measure in record.scores:
                    values[(record.condition, record.user_id, measure)].append(
                        record.scores[measure]
                    )
    table: dict[str, dict[str, dict[str, float]]] = defaultdict(lambda: defaultdict(dict))
    for (condition, user, measure), scores in values.items():
        table[condition][user][measure] = float(np.mean(scores))
    return table


def summary(tables: dict[str, dict[str, dict[str, dict[str, float]]]]) -> dict[str, Any]:
    """Means per placement and memory, and the paired turn - system difference."""
    out: dict[str, Any] = {"means": {}, "turn_minus_system": {}}
    for placement, table in tables.items():
        out["means"][placement] = {
            condition: {
                m: round(float(np.mean([u[m] for u in users.values() if m in u])), 3)
                for m in MEASURES
            }
            for condition, users in table.items()
        }
    for condition in MEMORIES:
        system, turn = tables["system"].get(condition, {}), tables["turn"].get(condition, {})
        shared = sorted(set(system) & set(turn))
        diffs = {}
        for m in MEASURES:
            rows = [turn[u][m] - system[u][m] for u in shared if m in turn[u] and m in system[u]]
            low, high = bootstrap_interval(rows, resamples=2000)
            diffs[m] = {
                "mean": round(float(np.mean(rows)), 3) if rows else None,
                "ci95": [round(low, 3), round(high, 3)],
                "users": len(rows),
            }
        out["turn_minus_system"][condition] = diffs
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--model", default="llamacpp/qwen2.5-coder-0.5b")
    parser.add_argument("--users", type=int, default=10)
    parser.add_argument("--out", metavar="DIR", help="keep the two runs under DIR (new)")
    args = parser.parse_args()
    started = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(args.out) if args.out else Path(tmp)
        tables = {}
        for placement in PLACEMENTS:
            run_dir = root / f"notes-in-{placement}"
            run(config(run_dir, args.model, args.users, placement), progress=False)
            tables[placement] = per_user(run_dir)
    result = {
        "model": args.model,
        "users": args.users,
        "experiment": "MPT recall, generated users seed 0, 4 history sessions, 1 instance "
        "per query type and user",
        **summary(tables),
        "wall_s": round(time.perf_counter() - started, 1),
    }
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
