"""Speed: execute and check, turn by turn, the ground truth of the 200 BFCL base tasks.

Prints JSON: tasks, how many scored 100%, and the seconds taken (target: under 5 s).
"""

from __future__ import annotations

import json
import time

from rapport.envs.prefix import check_accuracy, load_tasks, replay_turns


def main() -> None:
    """Replay and check every base task's ground truth on fresh backends."""
    started = time.perf_counter()
    tasks = load_tasks("base")
    loaded = time.perf_counter()
    perfect = calls = 0
    for task in tasks:
        trial = replay_turns(task, task.ground_truth)
        calls += len(task.reference_calls)
        perfect += check_accuracy(task, trial).success
    finished = time.perf_counter()
    print(
        json.dumps(
            {
                "benchmark": "prefix_ground_truth",
                "category": "base",
                "tasks": len(tasks),
                "reference_calls": calls,
                "tasks_at_100_percent": perfect,
                "load_s": round(loaded - started, 3),
                "execute_and_check_s": round(finished - loaded, 3),
                "total_s": round(finished - started, 3),
                "target_s": 5.0,
            }
        )
    )


if __name__ == "__main__":
    main()
