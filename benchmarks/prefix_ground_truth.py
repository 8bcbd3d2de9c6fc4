"""Speed and soundness: execute and check, turn by turn, the ground truth of BFCL tasks.

Prints one JSON line per category: tasks, how many scored 100%, the reference calls that
the backends refused (no such function) or that raised, and the seconds taken to execute
and check (target for the 200 base tasks: under 5 s) and to open and check the data.
By default the installed bfcl-eval's base tasks; ``--task-data PATH`` reads a data folder
or a bfcl-eval wheel instead (BFCL v3 or v4), and ``--categories`` names the categories
(``all``: the four BFCL ones the data holds).

    python benchmarks/prefix_ground_truth.py --task-data bfcl_eval-2025.6.8-py3-none-any.whl \\
        --categories all
"""

from __future__ import annotations

import argparse
import json
import sys
import time

from rapport.envs.prefix import (
    TaskData,
    TaskDataError,
    check_accuracy,
    open_task_data,
    replay_turns,
)


def replay(data: TaskData, category: str) -> dict[str, object]:
    """Replay and check every task's ground truth of one category on fresh backends."""
    started = time.perf_counter()
    tasks = data.tasks(category)  # type: ignore[arg-type]
    perfect = calls = refused = raised = 0
    for task in tasks:
        trial = replay_turns(task, task.ground_truth)
        calls += len(task.reference_calls)
        refused += sum(c.refused for c in trial.log)
        raised += sum(c.error is not None and not c.refused for c in trial.log)
        perfect += check_accuracy(task, trial).success
    finished = time.perf_counter()
    return {
        "benchmark": "prefix_ground_truth",
        "task_data": data.label,
        "category": category,
        "tasks": len(tasks),
        "reference_calls": calls,
        "tasks_at_100_percent": perfect,
        "reference_calls_refused": refused,
        "reference_calls_raising": raised,
        "execute_and_check_s": round(finished - started, 3),
        "target_s": 5.0,
    }


def main(argv: list[str] | None = None) -> int:
    """Replay the ground truth of the chosen categories; print one JSON line each."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--task-data", metavar="PATH", help="data folder or bfcl-eval wheel")
    parser.add_argument("--categories", default="base", help="comma-separated, or 'all'")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    try:
        data = open_task_data(args.task_data)
    except TaskDataError as exc:
        print(f"prefix_ground_truth: {exc}", file=sys.stderr)
        return 2
    opened = round(time.perf_counter() - started, 3)
    wanted = data.categories if args.categories == "all" else args.categories.split(",")
    for category in wanted:
        if category not in data.categories:
            print(f"prefix_ground_truth: {data.label} holds no {category} tasks", file=sys.stderr)
            return 2
        print(json.dumps(replay(data, category) | {"open_and_check_data_s": opened}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
