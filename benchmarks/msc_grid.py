"""MultiSessionCollab's tables: five datasets x (no memory, reflection) x users x sessions at
``--max-turns 10`` (Table 1), and (``--ablation``) the ablation settings S1-S5 per dataset
(Table 3); then the tables in MSC's layout and Figure 3's curve. Prints one JSON object.

It reads MSC's own data from a checkout the user supplies (never shipped with rapport):
``CACHE/<dataset>/testset_size20_seed42.json`` and ``user_profiles.json``; with
``--prompts-from CHECKOUT`` every run plays MSC's own prompts (S1 its one-shot prompt, S3-S5
its user prompt, S2 its prompt for a user without preferences). Each dataset is one ``rapport
run`` into its own run dir (``OUT/<dataset>``, ``OUT/ablation/<dataset>``, each with the run's
output in ``run.log``), so memory starts empty per dataset as in MSC's one ``run.py`` per
dataset; running the command again resumes every run.

    python benchmarks/msc_grid.py --cache CHECKOUT/collaborativeagents/datasets/cache \\
        --profiles CHECKOUT/collaborativeagents/user_profiles/user_profiles.json \\
        --prompts-from CHECKOUT \\
        --model agent=openai/MODEL,base_url=URL --model user=openai/U,base_url=URL2 \\
        --model judge=openai/U,base_url=URL2 --out runs/msc_grid [--ablation]

``OUT/msc_tables.md`` holds Table 1 (TS %, UE, Len per dataset; each memory value with its
change from no memory, ↑/↓; Overall the mean of the five datasets' means, as the paper
computes it) and Table 3 (S1: one answer per problem; S1 and S2 without UE).
``OUT/figure3_<metric>.svg`` draws Figure 3 / App. E: per session, memory minus no memory,
each averaged over all users and datasets, raw and smoothed with a centered moving average
(the paper smooths its curves but does not say how; the window is ours).

Defaults are MSC's: every profile (100 users), 20 sessions, 10 turns. ``--users 2
--sessions 2 --model all=scripted/auto`` checks the plumbing in seconds.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from rapport.cli import main as rapport_main
from rapport.log import SessionRecord
from rapport.report import chart, chart_svg
from rapport.store import RunStore

DATASETS = ("math-500", "math-hard", "logiqa", "mmlu", "medqa")
"""MSC's datasets, in the order of its tables (its cache folders: ``math_hard`` ...)."""
FOLDERS = {"math-hard": "math_hard"}
METRICS = ("TS", "UE", "Len")
TABLE1 = (("none", "no memory"), ("reflection", "+ memory"))
TABLE3 = (
    ("direct", "S1"),
    ("multiturn_no_prefs", "S2"),
    ("with_prefs", "S3"),
    ("oracle", "S4"),
    ("memory", "S5"),
)
"""collab-ablation's conditions as Table 3's settings."""
NO_UE = frozenset({"direct", "multiturn_no_prefs"})
SMOOTHING = 5
"""The moving average's window, in sessions."""


def parse(argv: Sequence[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cache", required=True, help="MSC's datasets/cache folder")
    parser.add_argument("--profiles", required=True, help="MSC's user_profiles.json")
    parser.add_argument("--prompts-from", default=None, help="a checkout: MSC's own prompts")
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
    if args.prompts_from is not None:
        argv += ["--prompts-from", args.prompts_from]
    for spec in args.model:
        argv += ["--model", spec]
    if args.users is not None:
        argv += ["--users", str(args.users)]
    if args.preset is not None:
        argv += ["--preset", args.preset]
    return argv, run_dir


def mean(values: Sequence[float]) -> float | None:
    return sum(values) / len(values) if values else None


def user_means(records: Sequence[SessionRecord], metric: str) -> float | None:
    """MSC's average (§3.4): per user over its sessions, then over users."""
    by_user: dict[str, list[float]] = {}
    for r in records:
        if metric in r.scores:
            by_user.setdefault(r.user_id, []).append(r.scores[metric])
    return mean([m for v in by_user.values() if (m := mean(v)) is not None])


def per_problem(records: Sequence[SessionRecord], metric: str) -> float | None:
    """Table 3's S1: one answer per problem (the first session that asked it)."""
    first: dict[str, float] = {}
    for r in sorted(records, key=lambda r: (r.index, r.user_id)):
        if metric in r.scores:
            first.setdefault(r.spec_id, r.scores[metric])
    return mean(list(first.values()))


def shown(value: float | None, metric: str) -> str:
    if value is None:
        return "-"
    return f"{value * 100:.2f}" if metric == "TS" else f"{value:.2f}"


def with_delta(value: float | None, base: float | None, metric: str) -> str:
    """A value with its change from the row above it, as Table 1 writes it (↑/↓)."""
    text = shown(value, metric)
    if value is None or base is None:
        return text
    scale = 100.0 if metric == "TS" else 1.0
    change = round((value - base) * scale, 2)
    if change == 0:
        return text
    return f"{text}{'↑' if change > 0 else '↓'}{abs(change):.2f}"


def cells(
    by_dataset: dict[str, list[SessionRecord]], condition: str
) -> dict[str, dict[str, float | None]]:
    """Dataset (and ``Overall``: the mean of the datasets' means, as Table 1) -> metric ->
    the condition's value (S1, ``direct``: one answer per problem; S1 and S2 have no UE)."""
    values: dict[str, dict[str, float | None]] = {}
    for dataset, records in by_dataset.items():
        mine = [r for r in records if r.condition == condition]
        average = per_problem if condition == "direct" else user_means
        values[dataset] = {m: average(mine, m) for m in METRICS}
        if condition in NO_UE:
            values[dataset]["UE"] = None
    values["Overall"] = {
        m: mean([v[m] for v in values.values() if v[m] is not None]) for m in METRICS
    }
    return values


def table(
    title: str, by_dataset: dict[str, list[SessionRecord]], rows: Sequence[tuple[str, str]]
) -> tuple[str, dict[str, object]]:
    """One Markdown table in the layout of MSC's Table 1 / Table 3: a row per condition
    (`rows`: condition, label), TS %, UE and Len per dataset and Overall; each row after
    the first in Table 1 with its change from the baseline row (↑/↓)."""
    columns = [*by_dataset, "Overall"]
    present = {r.condition for records in by_dataset.values() for r in records}
    head = ["", *(f"{c} {m}{' (%)' if m == 'TS' else ''}" for c in columns for m in METRICS)]
    lines = [f"### {title}", "", "| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    data: dict[str, object] = {}
    base: dict[str, dict[str, float | None]] | None = None
    for condition, label in rows:
        if condition not in present:
            continue
        values = cells(by_dataset, condition)
        data[condition] = values
        if base is None or title.startswith("Table 3"):
            row = [shown(values[c][m], m) for c in columns for m in METRICS]
        else:
            row = [with_delta(values[c][m], base[c][m], m) for c in columns for m in METRICS]
        base = base or values
        lines.append("| " + " | ".join([label, *row]) + " |")
    return "\n".join(lines), data


def session_deltas(by_dataset: dict[str, list[SessionRecord]], metric: str) -> list[float]:
    """Figure 3 / App. E: per session, memory minus no memory, each averaged over all
    users of all datasets."""
    pooled = [r for records in by_dataset.values() for r in records]
    sessions = sorted({r.index for r in pooled})
    deltas = []
    for s in sessions:
        at = [r for r in pooled if r.index == s and metric in r.scores]
        memory = mean([r.scores[metric] for r in at if r.condition == "reflection"])
        none = mean([r.scores[metric] for r in at if r.condition == "none"])
        if memory is not None and none is not None:
            deltas.append(memory - none)
    return deltas


def smoothed(values: Sequence[float], window: int = SMOOTHING) -> list[float]:
    """A centered moving average (the window shrinks at the ends)."""
    half = window // 2
    return [
        sum(values[max(0, i - half) : i + half + 1]) / len(values[max(0, i - half) : i + half + 1])
        for i in range(len(values))
    ]


@dataclass
class DeltaAt:
    """One point of the Figure 3 curve (what the report's chart draws)."""

    index: int
    mean: float
    ci_low: float
    ci_high: float
    users: int


def standalone(fragment: str) -> str:
    """The report's chart (a ``<figure>`` for HTML) as an SVG file of its own."""
    svg = fragment[fragment.index("<svg") : fragment.rindex("</svg>") + len("</svg>")]
    return svg.replace("<svg ", '<svg xmlns="http://www.w3.org/2000/svg" ', 1) + "\n"


def figure(by_dataset: dict[str, list[SessionRecord]], out: Path) -> dict[str, object]:
    """Figure 3's curves (memory − none per session, raw and smoothed) as SVGs, one per
    metric, drawn with the report's chart; returns the deltas."""
    users = len({r.user_id for records in by_dataset.values() for r in records})
    found: dict[str, object] = {}
    for metric in METRICS:
        raw = session_deltas(by_dataset, metric)
        if not raw:
            continue
        smooth = smoothed(raw)
        series = {
            "memory − none": [DeltaAt(i, v, v, v, users) for i, v in enumerate(raw)],
            f"smoothed ({SMOOTHING}-session mean)": [
                DeltaAt(i, v, v, v, users) for i, v in enumerate(smooth)
            ],
        }
        drawn = chart(f"Δ{metric} (memory − none) by session", series, zero_line=True)
        path = out / f"figure3_{metric}.svg"
        path.write_text(standalone(str(chart_svg(drawn))), encoding="utf-8")
        found[metric] = {"raw": raw, "smoothed": smooth, "svg": str(path)}
    return found


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
        if ablation:
            text, data = table("Table 3 (ablation)", by_dataset, TABLE3)
        else:
            text, data = table("Table 1", by_dataset, TABLE1)
            summary["figure3"] = figure(by_dataset, Path(args.out))
        parts.append(text)
        summary["ablation" if ablation else "main"] = data
    report = Path(args.out) / "msc_tables.md"
    report.parent.mkdir(parents=True, exist_ok=True)
    report.write_text("\n\n".join(parts) + "\n", encoding="utf-8")
    print(json.dumps({"tables": str(report), "preset": args.preset, **summary}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
