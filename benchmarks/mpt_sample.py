"""Take a subset of a PRefine release's source examples for a smaller `--data` run; prints JSON.

Every example is built into instances by the release's rules first (no model is called), so
the summary says what each chosen example yields: history sessions and instances per
challenge. Under mix600-v1's rules some examples yield no instance at all; a run on them only
spends learning calls, so `--first` and `--draw` take only examples with at least one.

Choose by id (exact, in source order), or the first N usable examples, plus K drawn uniformly
(seeded) from the usable ones not taken yet:

    python benchmarks/mpt_sample.py --release PRefine --data mix600.json \\
        --ids ID,ID,... --out subset.json
    python benchmarks/mpt_sample.py --release PRefine --data mix600.json \\
        --first 4 --draw 4 --seed 0 --out subset.json

The subset keeps every key of each example, so the same command line with `--data
subset.json` builds exactly these examples' instances (its counts are then not checked
against the config's; the run notes so).
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from collections import Counter
from pathlib import Path
from typing import Any

from rapport.envs.mpt import read_release, release_users
from rapport.envs.mpt._release_layout import ReleaseLayoutError


def summarize(example: dict[str, Any], plan: dict[str, Any]) -> dict[str, Any]:
    """What one example yields: history sessions and instances per challenge."""
    challenges = Counter(str(i["challenge"]) for i in plan["instances"])
    return {
        "example_id": example["example_id"],
        "history_sessions": len(plan["history"]),
        "instances": len(plan["instances"]),
        "per_challenge": dict(sorted(challenges.items())),
    }


def choose(
    summaries: list[dict[str, Any]],
    *,
    ids: list[str] | None,
    first: int,
    draw: int,
    seed: int,
) -> list[int]:
    """Positions of the chosen examples, in source order.

    Raises:
        ValueError: an unknown id, or fewer usable examples than asked.
    """
    if ids is not None:
        position = {s["example_id"]: n for n, s in enumerate(summaries)}
        unknown = [i for i in ids if i not in position]
        if unknown:
            raise ValueError(f"not in the data: {', '.join(unknown)}")
        return sorted({position[i] for i in ids})
    usable = [n for n, s in enumerate(summaries) if s["instances"] > 0]
    if first + draw > len(usable):
        raise ValueError(f"{first} + {draw} asked, {len(usable)} examples yield instances")
    taken = usable[:first]
    rest = usable[first:]
    taken += random.Random(seed).sample(rest, draw)
    return sorted(taken)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--release", required=True, help="a checkout (or copy) of the release")
    parser.add_argument("--dataset", default="mix600-v1")
    parser.add_argument("--data", help="the source examples (default: the config's source)")
    parser.add_argument("--ids", help="comma-separated example ids")
    parser.add_argument("--first", type=int, default=0, help="the first N usable examples")
    parser.add_argument("--draw", type=int, default=0, help="K more, drawn uniformly")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, help="where to write the subset (JSON list)")
    args = parser.parse_args(argv)
    ids = [i.strip() for i in args.ids.split(",") if i.strip()] if args.ids else None
    if ids is None and args.first + args.draw <= 0:
        parser.error("give --ids, or --first and/or --draw")
    if min(args.first, args.draw) < 0:
        parser.error("--first and --draw are counts")
    try:
        inputs = read_release(args.release, args.dataset, args.data)
        plans = release_users(inputs)
    except (ReleaseLayoutError, OSError) as exc:
        print(f"mpt_sample: {exc}", file=sys.stderr)
        return 2
    summaries = [summarize(row, plan) for row, plan in zip(inputs.rows, plans, strict=True)]
    try:
        chosen = choose(summaries, ids=ids, first=args.first, draw=args.draw, seed=args.seed)
    except ValueError as exc:
        print(f"mpt_sample: {exc}", file=sys.stderr)
        return 2
    if args.out is not None:
        subset = [inputs.rows[n] for n in chosen]
        args.out.write_text(json.dumps(subset, ensure_ascii=False, indent=2) + "\n", "utf-8")
    picked = [summaries[n] for n in chosen]
    print(
        json.dumps(
            {
                "examples_in_data": len(summaries),
                "examples_with_instances": sum(s["instances"] > 0 for s in summaries),
                "chosen": picked,
                "history_sessions": sum(s["history_sessions"] for s in picked),
                "instances": sum(s["instances"] for s in picked),
                "per_challenge": dict(
                    sorted(sum((Counter(s["per_challenge"]) for s in picked), Counter()).items())
                ),
                "out": str(args.out) if args.out else None,
            },
            indent=2,
        )
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
