"""Time the MPT generator: users per second for 10,000 users (target: under 30 s). Prints JSON."""

from __future__ import annotations

import argparse
import hashlib
import json
import time

from rapport.envs.mpt import generate_users


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--users", type=int, default=10_000)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    started = time.perf_counter()
    users = generate_users(args.users, args.seed)
    seconds = time.perf_counter() - started
    blob = json.dumps(users, sort_keys=True).encode()
    print(
        json.dumps(
            {
                "benchmark": "mpt_generate",
                "users": args.users,
                "seconds": round(seconds, 3),
                "users_per_second": round(args.users / seconds, 1),
                "history_sessions": sum(len(u["history"]) for u in users),
                "eval_instances": sum(len(u["instances"]) for u in users),
                "sha256": hashlib.sha256(blob).hexdigest(),
                "target_seconds": 30,
                "meets_target": seconds < 30,
            }
        )
    )


if __name__ == "__main__":
    main()
