"""``rapport demo``: a small collab experiment on the embedded model, with its report.

Two users, three sessions each, no memory against reflection, on generated problems.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from rapport.eval import ExperimentConfig

from ._run import execute, prepare

DEMO_RUN_DIR = Path("runs/demo")
DEMO_MODEL = "llamacpp/qwen2.5-coder-0.5b"
"""The small embedded model: on two CPU cores the 1.5B one takes about 35 minutes for the
demo, the 0.5B one under ten. `--model` picks another."""


def demo_config(
    *, run_dir: Path = DEMO_RUN_DIR, max_turns: int = 3, models: dict[str, str] | None = None
) -> ExperimentConfig:
    """The demo's experiment: sized to finish in minutes on two CPU cores."""
    return ExperimentConfig(
        benchmark="collab",
        memory=["none", "reflection"],
        users=2,
        sessions=3,
        max_turns=max_turns,
        seed=0,
        run_dir=run_dir,
        models=dict(models or {"all": DEMO_MODEL}),
        options={"problems": "generated"},
    )


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``demo`` command."""
    parser = subparsers.add_parser(
        "demo",
        help="a small collab run (none vs reflection) on the embedded model",
        description="Run 2 users x 3 sessions of collab with no memory and with reflection, "
        "then print the table and write the HTML report. Running it again resumes.",
    )
    parser.add_argument("--run-dir", metavar="DIR", default=str(DEMO_RUN_DIR))
    parser.add_argument("--max-turns", metavar="N", type=int, default=3)
    parser.add_argument(
        "--model",
        metavar="SPEC",
        help=f"model for every role (default: the small embedded one, {DEMO_MODEL})",
    )
    parser.add_argument("--no-progress", action="store_true", help="hide the progress bar")
    parser.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    """Run the command."""
    config = demo_config(
        run_dir=Path(args.run_dir),
        max_turns=args.max_turns,
        models={"all": args.model} if args.model else None,
    )
    return execute(prepare(config), progress=not args.no_progress)
