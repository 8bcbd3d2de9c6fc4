"""MultiSessionCollab's headline grid: five datasets x (no memory, reflection) x users x
sessions at ``--max-turns 10``, and (``--ablation``) the ablation conditions per dataset;
then one report laid out like MSC's tables: TS %, UE and Len per dataset and overall, each
with its 95% bootstrap CI over users. Prints one JSON object; writes the tables as Markdown.

It reads MSC's own data from a checkout the user supplies (never shipped with rapport):
``CACHE/<dataset>/testset_size20_seed42.json`` and ``user_profiles.json``. Each dataset is
one ``rapport run`` into its own run dir (``OUT/<dataset>``, ``OUT/ablation/<dataset>``,
each with the run's output in ``run.log``); running the command again resumes every run.

    python benchmarks/msc_grid.py --cache CHECKOUT/collaborativeagents/datasets/cache \\
        --profiles CHECKOUT/collaborativeagents/user_profiles/user_profiles.json \\
        --model agent=openai/MODEL,base_url=URL --model user=openai/U,base_url=URL2 \\
        --model judge=openai/U,base_url=URL2 --out runs/msc_grid [--ablation]

Defaults are MSC's: every profile (100 users), 20 sessions, 10 turns. ``--users 2
--sessions 2 --model all=scripted/auto`` checks the plumbing in seconds.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
from collections.abc import Sequence
from pathlib import Path

from rapport.cli import main as rapport_main
from rapport.eval import Estimate, condition_metrics
from rapport.log import SessionRecord
from rapport.store import RunStore

DATASETS = ("math-hard", "math-500", "logiqa", "mmlu", "medqa")
"""MSC's datasets, in the order of its tables (its cache folders: ``math_hard`` ...)."""
FOLDERS = {"math-hard": "math_hard"}
METRICS = ("TS", "UE", "Len")


def parse(argv: Sequence[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cache", required=True, help="MSC's datasets/cache folder")
    parser.add_argument("--profiles", required=True, help="MSC's user_profiles.json")
    parser.add_argument("--model", action="append", default=[], metavar="ROLE=SPEC[,k=v]")
    parser.add_argument("--out", default="runs/msc_grid", help="where the run dirs go")
    parser.add_argument("--users", type=int, default=None, help="default: every profile")
    parser.add_argument("--sessions", type=int, default=20)
    parser.add_argument("--max-turns", type=int, default=10)
    parser.add_argument("--datasets", default=",".join(DATASETS))
    parser.add_argument("--ablation", action="store_true", help="also the ablation runs")
    parser.add_argument("--preset", default=None, help="a preset (default: MSC's protocol)")
    parser.add_argument("--concurrency", type=int, default=1)
    return parser.parse_args(argv)


def run_argv(args: argparse.Namespace, dataset: str, ablation: bool) -> tuple[list[str], Path]:
    """The ``rapport run`` command of one dataset's run, and its run dir."""
    folder = Path(args.cache) / FOLDERS.get(dataset, dataset)
    run_dir = Path(args.out) / ("ablation" if ablation else "") / dataset
    argv = ["run", "collab-ablation" if ablation else "collab"]
    argv += ["--memory", "reflection" if ablation else "none,reflection"]
    argv += ["--sessions", str(args.sessions), "--max-turns", str(args.max_turns)]
    argv += ["--run-dir", str(run_dir), "--concurrency", str(args.concurrency), "--no-progress"]
    argv += ["--problems", str(folder), "--profiles", args.profiles]
    for spec in args.model:
        argv += ["--model", spec]
    if args.users is not None:
        argv += ["--users", str(args.users)]
    if args.preset is not None:
        argv += ["--preset", args.preset]
    return argv, run_dir


def cell(est: Estimate | None, metric: str) -> str:
    if est is None:
        return "-"
    scale, digits = (100.0, 1) if metric == "TS" else (1.0, 2)
    low, high = est.ci_low * scale, est.ci_high * scale
    return f"{est.mean * scale:.{digits}f} [{low:.{digits}f}, {high:.{digits}f}]"


def table(title: str, by_dataset: dict[str, list[SessionRecord]]) -> tuple[str, dict[str, object]]:
    """One Markdown table (rows: conditions; columns: TS %, UE, Len per dataset, overall)."""
    columns = [*by_dataset, "overall"]
    pooled = [r for records in by_dataset.values() for r in records]
    estimates = {d: condition_metrics(rs, METRICS) for d, rs in by_dataset.items()}
    estimates["overall"] = condition_metrics(pooled, METRICS)
    conditions = list(dict.fromkeys(c for e in estimates.values() for c in e))
    head = ["condition", *(f"{c} {m}{' %' if m == 'TS' else ''}" for c in columns for m in METRICS)]
    lines = [f"### {title}", "", "| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    data: dict[str, object] = {}
    for condition in conditions:
        cells = [cell(estimates[c].get(condition, {}).get(m), m) for c in columns for m in METRICS]
        lines.append("| " + " | ".join([condition, *cells]) + " |")
        data[condition] = {
            c: {m: e.model_dump() for m, e in estimates[c].get(condition, {}).items()}
            for c in columns
        }
    return "\n".join(lines), data


def sessions_of(run_dir: Path) -> list[SessionRecord]:
    with RunStore.open_readonly(run_dir) as store:
        return [r for r in store.sessions() if r.status == "ok"]


def main(argv: Sequence[str]) -> int:
    args = parse(argv)
    datasets = [d.strip() for d in args.datasets.split(",") if d.strip()]
    unknown = sorted(set(datasets) - set(DATASETS))
    if unknown:
        print(f"msc_grid: unknown datasets {', '.join(unknown)}", file=sys.stderr)
        return 2
    parts, summary = [], {}
    for ablation in [False, True] if args.ablation else [False]:
        by_dataset = {}
        for dataset in datasets:
            argv, run_dir = run_argv(args, dataset, ablation)
            run_dir.mkdir(parents=True, exist_ok=True)
            with (run_dir / "run.log").open("w") as log, contextlib.redirect_stdout(log):
                code = rapport_main(argv)
            if code != 0:
                print(f"msc_grid: {dataset}: rapport run exited {code}", file=sys.stderr)
                return code
            by_dataset[dataset] = sessions_of(run_dir)
        title = "Ablation" if ablation else "Main grid (no memory vs reflection)"
        text, data = table(title, by_dataset)
        parts.append(text)
        summary["ablation" if ablation else "main"] = data
    report = Path(args.out) / "msc_tables.md"
    report.parent.mkdir(parents=True, exist_ok=True)
    report.write_text("\n\n".join(parts) + "\n", encoding="utf-8")
    print(json.dumps({"tables": str(report), "preset": args.preset, **summary}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
