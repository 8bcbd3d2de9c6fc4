"""Wall time, peak memory and effect of `rapport demo` on the embedded model, from an empty
response cache (the model files are shared; the cache and run dir are fresh). Prints one JSON
object: the wall time, the main metric per condition and each memory's paired difference to
`none` with its 95% CI (users are the unit).

Run it alone (one llama.cpp process at a time):
    python benchmarks/demo_run.py [--users N] [--sessions N] [--concurrency K] [--run-dir DIR]
Targets: under 10 minutes wall on 2 cores once installed; peak RSS under 4 GB; a memory whose
paired CI excludes zero. Run it twice: the numbers are the same (seeded users, seeded calls).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from rapport import models_home, rapport_home
from rapport.report import build_report

METRIC = "f1"
"""The demo's metric (see rapport.cli._demo_text.METRIC)."""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    for flag in ("--users", "--sessions", "--concurrency", "--model"):
        parser.add_argument(flag)
    parser.add_argument(
        "--run-dir", metavar="DIR", help="run into DIR (new) and keep it (default: a temp dir)"
    )
    args = parser.parse_args()
    extra = [
        item
        for flag in ("users", "sessions", "concurrency", "model")
        if getattr(args, flag) is not None
        for item in (f"--{flag}", getattr(args, flag))
    ]
    with tempfile.TemporaryDirectory() as tmp:
        # The embedder's ONNX export is part of the install (`rapport models embedder`), not
        # of the response cache: share it like the model files.
        home = Path(tmp) / "home"
        home.mkdir()
        if (rapport_home() / "embeddings").is_dir():
            (home / "embeddings").symlink_to(rapport_home() / "embeddings")
        env = {
            **os.environ,
            "RAPPORT_HOME": str(home),
            "RAPPORT_MODELS": str(models_home()),
        }
        run_dir = Path(args.run_dir) if args.run_dir else Path(tmp) / "run"
        if args.run_dir and run_dir.exists():
            parser.error(f"--run-dir {run_dir} exists: the measurement starts from nothing")
        command = [sys.executable, "-m", "rapport", "demo", "--no-progress"]
        command += ["--run-dir", str(run_dir), *extra]
        started = time.perf_counter()
        done = subprocess.run(command, env=env, capture_output=True, text=True, check=False)
        wall = time.perf_counter() - started
        effect = _effect(run_dir) if done.returncode == 0 else {"stderr": done.stderr[-2000:]}
    peak_kb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    result = {
        "command": " ".join(["rapport demo", *extra]),
        "exit_code": done.returncode,
        "wall_s": round(wall, 1),
        "peak_rss_mb": round(peak_kb / 1024),
        "target_wall_s": 600,
        "target_peak_rss_mb": 4096,
        **effect,
    }
    print(json.dumps(result, indent=2))


def _effect(run_dir: Path) -> dict[str, Any]:
    report = build_report(run_dir)
    means = {
        condition: round(estimates[METRIC].mean, 3)
        for condition, estimates in report.conditions.items()
        if METRIC in estimates
    }
    paired = {
        condition: {
            "mean": round(d[METRIC].mean, 3),
            "ci95": [round(d[METRIC].ci_low, 3), round(d[METRIC].ci_high, 3)],
            "users": d[METRIC].users,
            "ci_excludes_zero": d[METRIC].ci_low > 0 or d[METRIC].ci_high < 0,
        }
        for condition, d in report.paired.items()
        if METRIC in d
    }
    return {
        "metric": METRIC,
        "sessions": report.sessions,
        "eval_sessions": report.eval_sessions,
        "model_calls": report.model_calls,
        "cached_calls": report.cached_calls,
        "error_sessions": report.error_sessions,
        "mean": means,
        f"paired_vs_{report.baseline}": paired,
    }


if __name__ == "__main__":
    main()
