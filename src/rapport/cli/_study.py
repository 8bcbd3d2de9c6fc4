"""``rapport study create|serve|status|revoke``: the real-user study app."""

from __future__ import annotations

import argparse
import json
import sqlite3
import sys
from typing import Any

from ._config import parse_models, port_number, whole_number
from ._errors import UsageError, directory_path


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``study`` command and its subcommands."""
    parser = subparsers.add_parser(
        "study",
        help="run a study with real people: invites, sessions, surveys",
        description="MultiSessionCollab's user study as a web app: participants work with "
        "the agent over condition blocks of three sessions and rate each one; the sessions "
        "land in a run store that `rapport report` and `rapport view` read.",
    )
    sub = parser.add_subparsers(dest="study_command", required=True, metavar="SUBCOMMAND")
    create = sub.add_parser(
        "create",
        help="make a study dir and one invite per participant",
        description="Make a study dir from a design file: one invite link per participant "
        "(study types and condition orders assigned in turn), a researcher page, and the "
        "models every session will use (fixed here; serve cannot change them).",
    )
    create.add_argument(
        "design",
        metavar="DESIGN.yaml",
        help="the study design file (docs/study-design.yaml is one)",
    )
    create.add_argument(
        "--participants",
        metavar="N",
        type=whole_number("--participants", 1, 10_000),
        required=True,
        help="how many participants (assigned types and condition orders in turn)",
    )
    create.add_argument("--out", metavar="DIR", required=True, help="the new study dir")
    create.add_argument(
        "--model",
        metavar="ROLE=SPEC",
        action="append",
        default=[],
        help="model per role (agent, memory; default: the embedded model); fixed for the "
        "study's life",
    )
    create.add_argument(
        "--problems-from",
        metavar="CHECKOUT",
        help="a checkout of the authors' user-study app (Shuhaibm/collaborative-agents-"
        "human-study): study types with an app_study take its problems and preference "
        "wordings, reflection its initial notes (default: the design's problems_from, "
        "else rapport's own)",
    )
    create.add_argument(
        "--invite-days",
        metavar="DAYS",
        type=float,
        default=None,
        help="invite links stop working this many days from now (default: never)",
    )
    create.set_defaults(handler=handle_create)
    serve = sub.add_parser(
        "serve",
        help="serve the study's pages",
        description="Serve the participants' and the researcher's pages of a study dir "
        "until Ctrl-C; every answer is committed before it is acknowledged.",
    )
    serve.add_argument("study_dir", metavar="DIR", help="the study dir `study create` made")
    serve.add_argument("--host", default="127.0.0.1", help="address (default 127.0.0.1)")
    serve.add_argument(
        "--port", metavar="N", type=port_number, default=8322, help="port (default 8322)"
    )
    serve.add_argument(
        "--proxy-headers",
        action="store_true",
        help="trust X-Forwarded-* from a reverse proxy on this machine",
    )
    serve.set_defaults(handler=handle_serve)
    status = sub.add_parser(
        "status",
        help="who has done what",
        description="Each participant's study type, condition order, consent, sessions "
        "done and closing survey (read-only: works while the study is served).",
    )
    status.add_argument("study_dir", metavar="DIR", help="the study dir `study create` made")
    status.add_argument("--json", action="store_true", help="print JSON (counts, participants)")
    status.set_defaults(handler=handle_status)
    revoke = sub.add_parser(
        "revoke",
        help="make participants' invite links stop working (what they did stays)",
        description="Revoke participants' invites: their links stop working at once, also "
        "while the study is served; their messages and answers stay in the study.",
    )
    revoke.add_argument("study_dir", metavar="DIR", help="the study dir")
    revoke.add_argument(
        "participants", metavar="PARTICIPANT", nargs="+", help="participant ids (p01 ...)"
    )
    revoke.set_defaults(handler=handle_revoke)


def handle_create(args: argparse.Namespace) -> int:
    """Make the study dir; print the invite paths and the researcher's page."""
    from rapport.envs.study import DesignError
    from rapport.llm import ModelError
    from rapport.study import INVITES_FILE, create_study

    out = directory_path("--out", args.out)
    try:
        made = create_study(
            args.design,
            args.participants,
            out,
            models=parse_models(args.model),
            invite_days=args.invite_days,
            problems_from=args.problems_from,
            check_models=True,
        )
    except DesignError as exc:
        raise UsageError(str(exc)) from exc
    except ModelError as exc:
        raise UsageError(f"cannot create {args.out}: {exc}") from exc
    except (OSError, sqlite3.Error) as exc:
        raise UsageError(f"cannot create the study in {out}: {exc}; nothing was kept") from exc
    print(f"study dir: {made.study_dir}")
    print(f"researcher page: /r/{made.researcher_token}/")
    print(f"invites ({len(made.tokens)}, also in {made.study_dir / INVITES_FILE}):")
    for participant, token in made.tokens.items():
        print(f"  {participant}  /p/{token}")
    print(f"serve it: rapport study serve {made.study_dir}")
    return 0


def _runtime(study_dir: str):
    from rapport.store import RunDirBusy, StoreError
    from rapport.study import StudyRuntime, is_study_dir

    if not is_study_dir(directory_path("DIR", study_dir)):
        raise UsageError(f"no study found in {study_dir} (missing study.sqlite)")
    try:
        return StudyRuntime(study_dir)
    except (RunDirBusy, PermissionError) as exc:
        raise UsageError(str(exc)) from exc
    except (FileNotFoundError, LookupError, StoreError) as exc:
        raise UsageError(f"{study_dir}: {exc}") from exc


def handle_serve(args: argparse.Namespace) -> int:
    """Serve until Ctrl-C."""
    from rapport.llm import ModelError
    from rapport.study import bind, missing_extra, record_serving, serve

    missing = missing_extra()
    if missing:
        raise UsageError(f"the study app needs {missing}: pip install 'rapport-toolkit[study]'")
    runtime = _runtime(args.study_dir)
    try:
        roles = {"agent"} | {r for m in runtime.memories.values() for r in (m.roles or ())}
        runtime.models.validate(roles)
    except ModelError as exc:
        runtime.close()
        raise UsageError(
            f"cannot serve {args.study_dir}: {exc} (a study's models are fixed when it is "
            "made: rapport study create ... --model ROLE=SPEC)"
        ) from exc
    try:
        sock = bind(args.host, args.port)
    except OSError as exc:
        runtime.close()
        raise UsageError(f"cannot serve {args.study_dir}: {exc}") from exc
    record_serving(runtime)
    host, port = sock.getsockname()[:2]
    print(
        f"rapport study: serving {args.study_dir} on http://{host}:{port}/ (Ctrl-C to stop)",
        file=sys.stderr,
        flush=True,
    )
    try:
        serve(runtime, sock, proxy=args.proxy_headers)
    except KeyboardInterrupt:
        pass  # Ctrl-C is how the server is stopped; everything said was committed
    finally:
        runtime.close()
    return 0


def handle_status(args: argparse.Namespace) -> int:
    """Print each participant's progress (read-only: works while the study is served)."""
    from rapport.study import StudyDB, is_study_dir, progress_rows

    if not is_study_dir(directory_path("DIR", args.study_dir)):
        raise UsageError(f"no study found in {args.study_dir} (missing study.sqlite)")
    db = StudyDB(args.study_dir, readonly=True)
    try:
        rows, counts = progress_rows(args.study_dir, db), db.counts()
    finally:
        db.close()
    if args.json:
        for r in rows:
            r["closing"] = r["closing"].model_dump() if r["closing"] else None
        print(json.dumps({"counts": counts, "participants": rows}))
        return 0
    print(", ".join(f"{k}: {v}" for k, v in counts.items()))
    print(status_table(rows))
    return 0


def handle_revoke(args: argparse.Namespace) -> int:
    """Revoke invites (works while the study is served)."""
    from rapport.study import StudyDB, is_study_dir

    if not is_study_dir(directory_path("DIR", args.study_dir)):
        raise UsageError(f"no study found in {args.study_dir} (missing study.sqlite)")
    db = StudyDB(args.study_dir)
    try:
        missing = db.revoke(args.participants)
    finally:
        db.close()
    if missing:
        raise UsageError(f"no participant {', '.join(missing)} in {args.study_dir}")
    print(f"revoked: {', '.join(args.participants)}")
    return 0


def status_table(rows: list[dict[str, Any]]) -> str:
    """The participants as aligned columns under a header."""
    head = ["participant", "study types", "condition order", "consented", "sessions", "closing"]
    body = [
        [
            r["participant"],
            r["study_type"],
            r["order"],
            "yes" if r["consented"] else "no",
            f"{r['done']}/{r['total']}",
            "answered" if r["closing"] else "-",
        ]
        for r in rows
    ]
    widths = [max(len(line[i]) for line in [head, *body]) for i in range(len(head))]
    lines = ["  ".join(c.ljust(w) for c, w in zip(line, widths, strict=True)).rstrip()
             for line in [head, *body]]  # fmt: skip
    return "\n".join("  " + line for line in lines)
