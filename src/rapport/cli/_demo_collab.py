"""``rapport demo collab``: a small collab experiment on the embedded model, with its report.

Four users, five sessions each, under no memory, reflection and the oracle (told the true
preferences), on generated problems, with the rule user (code plays the user, so every
model call is the agent's or the memory's).
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path
from typing import Any, TypeVar

from pydantic import ValidationError

from rapport._errors import error_line
from rapport.envs.collab import EnforcementEvent, PreferenceVerdictEvent, is_clarifying_question
from rapport.eval import ExperimentConfig
from rapport.log import SessionRecord
from rapport.store import RunStore

from ._config import _integer, parse_models
from ._errors import UsageError, reading_stores
from ._run import execute, prepare

_T = TypeVar("_T")

COLLAB_RUN_DIR = Path("runs/demo-collab")
DEMO_MODEL = "llamacpp/qwen2.5-coder-0.5b"
"""The small embedded model, about a third of the 1.5B's compute per token. `--model` picks
another."""

MODEL_NOTE = (
    "Note: neither embedded model (0.5B, 1.5B) acts on a formatting preference more often "
    "when told it (docs/collab.md measures this), so on them this demo shows the mechanism "
    "(what reflection writes, UE per session), not adaptation: no memory can beat none here. "
    "A model that follows formatting instructions (--model openai/...) is what the "
    "comparison needs."
)


DEMO_PRESET = "small"
"""The collab demo runs MultiSessionCollab adapted to small embedded models (its report
says so)."""

DEMO_USERS = 4
DEMO_SESSIONS = 5
"""Enough sessions per user that UE per session can be read as a curve."""

DEMO_CONCURRENCY = 1
"""Users run one at a time unless ``--concurrency`` says otherwise, as in ``rapport run``."""


def demo_config(
    *,
    run_dir: Path | str = COLLAB_RUN_DIR,
    users: int = DEMO_USERS,
    sessions: int = DEMO_SESSIONS,
    max_turns: int = 3,
    concurrency: int = DEMO_CONCURRENCY,
    models: dict[str, Any] | None = None,
) -> ExperimentConfig:
    """The demo's experiment: sized so that UE per session reads as a curve
    (`users` x `sessions` per condition).

    Raises:
        UsageError: a count out of range or an empty run dir (one line).
    """
    try:
        return _config(run_dir, users, sessions, max_turns, concurrency, models)
    except ValidationError as exc:
        raise UsageError(f"bad demo settings: {error_line(exc)}") from exc


def _config(
    run_dir: Path | str,
    users: int,
    sessions: int,
    max_turns: int,
    concurrency: int,
    models: dict[str, Any] | None,
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
        preset=DEMO_PRESET,
    )


def demo_models(given: list[str]) -> dict[str, Any] | None:
    """The roles' models from ``--model ROLE=SPEC`` flags over the default (None: none
    given, the small embedded model for every role)."""
    return {"all": DEMO_MODEL, **parse_models(given)} if given else None


def flag_or_default(value: str | None, default: _T) -> str | _T:
    """A flag's text when given (an empty one too: it is refused, not defaulted), else the
    default."""
    return default if value is None else value


def run_collab_demo(args: argparse.Namespace) -> int:
    """Run the collab demo from the ``demo`` command's flags, then print what it shows."""
    config = demo_config(
        run_dir=flag_or_default(args.run_dir, COLLAB_RUN_DIR),
        users=_integer("users", flag_or_default(args.users, str(DEMO_USERS))),
        sessions=_integer("sessions", flag_or_default(args.sessions, str(DEMO_SESSIONS))),
        max_turns=_integer("max_turns", flag_or_default(args.max_turns, "3")),
        concurrency=_integer(
            "concurrency", flag_or_default(args.concurrency, str(DEMO_CONCURRENCY))
        ),
        models=demo_models(args.model),
    )
    print(MODEL_NOTE)
    code = execute(prepare(config), progress=not args.no_progress, fail_on_errors=False)
    if code == 0:
        with reading_stores(config.run_dir), RunStore.open_readonly(config.run_dir) as store:
            records = store.sessions()
        print(ue_by_session(records))
        print(learned_excerpt(records) or "(no late session followed an earlier request)")
        print(MODEL_NOTE)
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
            for e in r.events_of(EnforcementEvent):
                if e.turn is not None and e.preference_id not in asked:
                    asked[e.preference_id] = (r.index, r.turns[e.turn].text)
    return ""


def _first_verdicts(record: SessionRecord) -> list[PreferenceVerdictEvent]:
    """The verdicts on the session's first judged agent reply."""
    verdicts = [
        v
        for v in record.events_of(PreferenceVerdictEvent)
        if v.turn and not is_clarifying_question(record.turns[v.turn - 1].text)
    ]
    first = min((v.turn for v in verdicts if v.turn is not None), default=None)
    return [v for v in verdicts if v.turn == first and v.checker_satisfied is not None]
