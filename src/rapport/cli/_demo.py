"""``rapport demo``: a small collab experiment on the embedded model, with its report.

Four users, five sessions each, under no memory, reflection and the oracle (told the true
preferences), on generated problems, with the rule user (code plays the user, so every
model call is the agent's or the memory's).
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path

from pydantic import ValidationError

from rapport.eval import ExperimentConfig, one_line
from rapport.log import PreferenceVerdictEvent, SessionRecord
from rapport.prefs import is_clarifying_question
from rapport.store import RunStore

from ._config import _integer
from ._errors import UsageError, reading_stores
from ._run import execute, prepare

DEMO_RUN_DIR = Path("runs/demo")
DEMO_MODEL = "llamacpp/qwen2.5-coder-0.5b"
"""The small embedded model, about a third of the 1.5B's compute per token. `--model` picks
another."""


DEMO_USERS = 4
DEMO_SESSIONS = 5
"""Enough sessions per user that UE per session can be read as a curve."""

DEMO_CONCURRENCY = 1
"""Users run one at a time unless ``--concurrency`` says otherwise, as in ``rapport run``."""


def demo_config(
    *,
    run_dir: Path | str = DEMO_RUN_DIR,
    users: int = DEMO_USERS,
    sessions: int = DEMO_SESSIONS,
    max_turns: int = 3,
    concurrency: int = DEMO_CONCURRENCY,
    models: dict[str, str] | None = None,
) -> ExperimentConfig:
    """The demo's experiment: sized so that UE per session reads as a curve
    (`users` x `sessions` per condition).

    Raises:
        UsageError: a count out of range or an empty run dir (one line).
    """
    try:
        return _config(run_dir, users, sessions, max_turns, concurrency, models)
    except ValidationError as exc:
        raise UsageError(f"bad demo settings: {one_line(exc)}") from exc


def _config(
    run_dir: Path | str,
    users: int,
    sessions: int,
    max_turns: int,
    concurrency: int,
    models: dict[str, str] | None,
) -> ExperimentConfig:
    return ExperimentConfig(
        benchmark="collab",
        memory=["none", "reflection", "oracle"],
        users=users,
        sessions=sessions,
        max_turns=max_turns,
        concurrency=concurrency,
        seed=0,
        run_dir=run_dir,
        models=dict(models or {"all": DEMO_MODEL}),
        options={"problems": "generated", "user": "rules"},
        # All notes go into the system prompt at session start: no note-selection call per
        # turn, which would double the demo's model calls on two cores.
        memory_options={"reflection": {"select": False}},
    )


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``demo`` command."""
    parser = subparsers.add_parser(
        "demo",
        help="a small collab run (none, reflection, oracle) on the embedded model",
        description=f"Run {DEMO_USERS} users x {DEMO_SESSIONS} sessions of collab with the rule "
        "user under no memory, reflection and the oracle, then print the table and write the "
        "HTML report. Running it again resumes.",
    )
    parser.add_argument("--run-dir", metavar="DIR", default=str(DEMO_RUN_DIR))
    parser.add_argument(
        "--users", metavar="N", default=str(DEMO_USERS), help=f"default {DEMO_USERS}"
    )
    parser.add_argument(
        "--sessions",
        metavar="N",
        default=str(DEMO_SESSIONS),
        help=f"sessions per user (default {DEMO_SESSIONS})",
    )
    parser.add_argument("--max-turns", metavar="N", default="3")
    parser.add_argument(
        "--concurrency",
        metavar="K",
        default=str(DEMO_CONCURRENCY),
        help=f"users run in parallel (default {DEMO_CONCURRENCY})",
    )
    parser.add_argument(
        "--model",
        metavar="SPEC",
        help=f"model for every role (default: the small embedded one, {DEMO_MODEL})",
    )
    parser.add_argument("--no-progress", action="store_true", help="hide the progress bar")
    parser.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    """Run the command."""
    if args.model is not None and not args.model.strip():
        # An empty spec must not fall back to the default: that loads the embedded model.
        raise UsageError(f"--model needs a model spec, got '{args.model}'")
    config = demo_config(
        run_dir=args.run_dir,
        users=_integer("users", args.users),
        sessions=_integer("sessions", args.sessions),
        max_turns=_integer("max_turns", args.max_turns),
        concurrency=_integer("concurrency", args.concurrency),
        models={"all": args.model} if args.model else None,
    )
    code = execute(prepare(config), progress=not args.no_progress, fail_on_errors=False)
    if code == 0:
        with reading_stores(config.run_dir), RunStore.open_readonly(config.run_dir) as store:
            records = store.sessions()
        print(ue_by_session(records))
        print(learned_excerpt(records) or "(no late session followed an earlier request)")
    return code


def ue_by_session(records: Sequence[SessionRecord]) -> str:
    """UE per session index per condition (mean over users), as lines of text."""
    table: dict[str, dict[int, list[float]]] = {}
    for r in records:
        if "UE" in r.scores:
            table.setdefault(r.condition, {}).setdefault(r.index, []).append(r.scores["UE"])
    lines = ["UE by session (mean over users):"]
    for condition, by_index in table.items():
        means = [f"{sum(v) / len(v):.2f}" for _, v in sorted(by_index.items())]
        lines.append(f"  {condition:<11} " + "  ".join(means))
    return "\n".join(lines)


def learned_excerpt(records: Sequence[SessionRecord], *, chars: int = 300) -> str:
    """A late session whose first answer honours a preference the user had to ask for in
    an earlier session (a learned memory's condition, not the oracle's), as a short text."""
    by_user: dict[tuple[str, str], list[SessionRecord]] = {}
    for r in records:
        if r.condition not in ("none", "oracle"):
            by_user.setdefault((r.condition, r.user_id), []).append(r)
    for (condition, user), sessions in sorted(by_user.items()):
        sessions.sort(key=lambda r: r.index)
        asked: dict[str, tuple[int, str]] = {}
        for r in sessions:
            for verdict in _first_verdicts(r):
                if verdict.preference_id in asked and verdict.checker_satisfied:
                    index, request = asked[verdict.preference_id]
                    reply = r.turns[verdict.turn - 1].text if verdict.turn else ""
                    return (
                        f"{condition}, {user}: in session {index + 1} the user asked: "
                        f'"{request}"\nIn session {r.index + 1} the first answer already '
                        f"complies ({verdict.preference_id}):\n{reply[:chars]}"
                    )
            for e in r.events_of("enforcement"):
                if e.turn is not None and e.preference_id not in asked:
                    asked[e.preference_id] = (r.index, r.turns[e.turn].text)
    return ""


def _first_verdicts(record: SessionRecord) -> list[PreferenceVerdictEvent]:
    """The verdicts on the session's first judged agent reply."""
    verdicts = [
        v
        for v in record.events_of("preference_verdict")
        if v.turn and not is_clarifying_question(record.turns[v.turn - 1].text)
    ]
    first = min((v.turn for v in verdicts if v.turn is not None), default=None)
    return [v for v in verdicts if v.turn == first and v.checker_satisfied is not None]
