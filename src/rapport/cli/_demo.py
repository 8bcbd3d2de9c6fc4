"""``rapport demo [collab]``: a small experiment on the embedded model where memory can show.

The default demo is MPT (personalized tool calling) on generated users, recall instances
only, under no memory and retrieval over past sessions (MiniLM, BM25 without it): a past call
that carried the user's preferred value is something a small model copies.
``rapport demo collab`` is the collab demo (the mechanism of reflection, UE per session).
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from rapport._errors import error_line
from rapport.eval import ExperimentConfig
from rapport.report import build_report
from rapport.store import RunStore

from ._config import _integer
from ._demo_collab import DEMO_MODEL, demo_models, flag_or_default, run_collab_demo
from ._demo_text import what_it_shows
from ._errors import UsageError, reading_stores
from ._run import execute, prepare

DEMO_RUN_DIR = Path("runs/demo")
DEMO_MEMORIES = ["none", "rag"]
DEMO_USERS = 10
"""Users drawn with seed 0; the paired CI is over users."""
DEMO_SESSIONS = 4
"""History sessions per user, played before the evaluation sessions (memory learns from
them)."""
DEMO_PER_CELL = 1
"""Recall instances per query type and user (context-guided, context-free)."""
DEMO_CONCURRENCY = 1
"""Users run one at a time unless ``--concurrency`` says otherwise, as in ``rapport run``."""

WHY = (
    "Why MPT recall: the agent copies what memory shows it. A history call that set the "
    "user's preferred value (a budget, a party size) is text a small model can repeat, so "
    "memory's effect on the embedded model shows in minutes. On collab it does not: neither "
    "embedded model acts on a formatting preference even when told it (docs/collab.md); "
    "`rapport demo collab` shows that demo's mechanism."
)


def demo_config(
    *,
    run_dir: Path | str = DEMO_RUN_DIR,
    users: int = DEMO_USERS,
    sessions: int = DEMO_SESSIONS,
    concurrency: int = DEMO_CONCURRENCY,
    models: dict[str, Any] | None = None,
) -> ExperimentConfig:
    """The demo's experiment: MPT recall on `users` generated users with `sessions` history
    sessions each, under ``none`` and ``rag``.

    Raises:
        UsageError: a count out of range or an empty run dir (one line).
    """
    try:
        return ExperimentConfig(
            benchmark="mpt",
            memory=list(DEMO_MEMORIES),
            users=users,
            concurrency=concurrency,
            seed=0,
            run_dir=run_dir,
            models=dict(models or {"all": DEMO_MODEL}),
            options={
                "challenges": ["recall"],
                "per_cell": DEMO_PER_CELL,
                "sessions_min": sessions,
                "sessions_max": sessions,
                "drift": 0.0,
            },
        )
    except ValidationError as exc:
        raise UsageError(f"bad demo settings: {error_line(exc)}") from exc


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``demo`` command."""
    parser = subparsers.add_parser(
        "demo",
        help="a small run on the embedded model: does memory beat none?",
        description=f"Run MPT recall on {DEMO_USERS} generated users ({DEMO_SESSIONS} history "
        "sessions each) under no memory and rag on the small embedded model, then say "
        "what it shows, with the paired 95% CI. `rapport demo collab` runs the collab demo (4 "
        "users x 5 sessions, rule user, none/reflection/oracle). Running it again resumes.",
    )
    parser.add_argument(
        "which", nargs="?", choices=("mpt", "collab"), default="mpt", help="default mpt"
    )
    parser.add_argument(
        "--run-dir", metavar="DIR", help="default runs/demo (collab: runs/demo-collab)"
    )
    parser.add_argument("--users", metavar="N", help=f"default {DEMO_USERS} (collab: 4)")
    parser.add_argument(
        "--sessions",
        metavar="N",
        help=f"history sessions per user (default {DEMO_SESSIONS}; collab: sessions per user, 5)",
    )
    parser.add_argument("--max-turns", metavar="N", help="collab only (default 3)")
    parser.add_argument(
        "--concurrency", metavar="K", help=f"users run in parallel (default {DEMO_CONCURRENCY})"
    )
    parser.add_argument(
        "--model",
        metavar="ROLE=SPEC",
        action="append",
        default=[],
        help="model for a role (agent, user, judge, memory, all); repeatable "
        f"(default: all={DEMO_MODEL}, the small embedded one)",
    )
    parser.add_argument("--no-progress", action="store_true", help="hide the progress bar")
    parser.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    """Run the command."""
    if args.which == "collab":
        return run_collab_demo(args)
    if args.max_turns is not None:
        raise UsageError("--max-turns applies to `rapport demo collab`: an MPT call is one turn")
    config = demo_config(
        run_dir=flag_or_default(args.run_dir, DEMO_RUN_DIR),
        users=_integer("users", flag_or_default(args.users, str(DEMO_USERS))),
        sessions=_integer("sessions", flag_or_default(args.sessions, str(DEMO_SESSIONS))),
        concurrency=_integer(
            "concurrency", flag_or_default(args.concurrency, str(DEMO_CONCURRENCY))
        ),
        models=demo_models(args.model),
    )
    code = execute(prepare(config), progress=not args.no_progress, fail_on_errors=False)
    if code == 0:
        with reading_stores(config.run_dir):
            report = build_report(config.run_dir)
            kinds = query_types(config.run_dir)
        print()
        print(what_it_shows(report, WHY, kinds))
    return code


def query_types(run_dir: Path) -> dict[int, str]:
    """Evaluation session index -> the query type (regime) its sessions asked, where all
    users' agree (the generator puts context-guided instances before context-free ones)."""
    seen: dict[int, set[str]] = {}
    with RunStore.open_readonly(run_dir) as store:
        for r in store.sessions(split="eval"):
            if regime := r.outcome.regime():
                seen.setdefault(r.index, set()).add(regime)
    return {i: next(iter(types)) for i, types in seen.items() if len(types) == 1}
