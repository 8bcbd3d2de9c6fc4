"""The researcher's pages: who has done what, the study's report tables, the closing
questionnaires, each participant's transcripts, and the data as JSON. Every page needs the
researcher's token."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import BaseRoute, Route

from rapport.envs.study import SESSIONS, Assignment
from rapport.report import Report, build_report, paired_table, summary_table
from rapport.store import RunStore

from ._db import SessionKey, StudyDB
from ._pages import page

if TYPE_CHECKING:
    from ._live import StudyRuntime


def progress_rows(study_dir: str | Path, db: StudyDB) -> list[dict[str, Any]]:
    """One row per participant: type, order, consent, sessions done, closing answers."""
    with RunStore.open_readonly(study_dir) as store:
        done: dict[str, int] = {}
        for row in store.session_rows(limit=1_000_000):
            done[row.user_id] = done.get(row.user_id, 0) + 1
    closings = db.closings()
    return [
        {
            "participant": a.participant,
            "study_type": " then ".join(a.study_types),
            "order": " then ".join(a.order),
            "consented": db.consented(a.participant),
            "done": done.get(a.participant, 0),
            "total": len(a.blocks) * SESSIONS,
            "closing": closings.get(a.participant),
        }
        for a in db.assignments()
    ]


def researcher_routes(runtime: StudyRuntime) -> list[BaseRoute]:
    """The researcher's routes under ``/r/{token}``."""

    def check(request: Request) -> None:
        if not runtime.db.is_researcher(request.path_params["token"]):
            raise HTTPException(404, "not found")

    async def overview(request: Request) -> Response:
        check(request)
        report = _report(runtime)
        tables = []
        if report is not None:
            tables = [summary_table(report)]
            if report.paired:
                tables.append(paired_table(report))
            tables += report.tables
        return page(
            "researcher.html",
            title=runtime.benchmark.design.title,
            rows=progress_rows(runtime.dir, runtime.db),
            tables=tables,
            token=request.path_params["token"],
            wide=True,
        )

    async def transcript(request: Request) -> Response:
        check(request)
        participant = request.path_params["participant"]
        try:
            who = runtime.benchmark.assignment(participant)
        except KeyError:
            raise HTTPException(404, "not found") from None
        return page(
            "transcript.html",
            title=runtime.benchmark.design.title,
            participant=participant,
            sessions=transcript_sessions(runtime, who),
            token=request.path_params["token"],
            wide=True,
        )

    async def report_json(request: Request) -> Response:
        check(request)
        report = _report(runtime)
        return JSONResponse(report.to_json() if report is not None else {})

    async def answers_json(request: Request) -> Response:
        check(request)
        return Response(runtime.db.as_json(), media_type="application/json")

    return [
        Route("/r/{token}/", overview),
        Route("/r/{token}/report.json", report_json),
        Route("/r/{token}/answers.json", answers_json),
        Route("/r/{token}/p/{participant}", transcript),
    ]


def transcript_sessions(runtime: StudyRuntime, who: Assignment) -> list[dict[str, Any]]:
    """A participant's sessions in the order they play them: part, study type, condition,
    problem, messages and survey answers (None before they are given)."""
    bank = runtime.benchmark.design.problem_bank()
    out = []
    for part, block in enumerate(who.blocks, start=1):
        for i, problem_id in enumerate(block.problems[:SESSIONS]):
            key = SessionKey(who.participant, block.condition, block.first + i)
            out.append(
                {
                    "part": part,
                    "number": i + 1,
                    "study_type": block.study_type,
                    "condition": block.condition,
                    "problem": bank[problem_id],
                    "messages": runtime.db.messages(key),
                    "survey": runtime.db.survey(key),
                }
            )
    return out


def _report(runtime: StudyRuntime) -> Report | None:
    with RunStore.open_readonly(runtime.dir) as store:
        if not store.session_count():
            return None
    return build_report(runtime.dir)
