"""The viewer's web app (Starlette + Jinja2 templates): the run's summary, lists of sessions,
a session turn by turn, two conditions side by side, memory over time, per-session curves."""

from __future__ import annotations

from collections.abc import Callable
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlencode

from jinja2 import Environment, PackageLoader, pass_context, select_autoescape
from jinja2.runtime import Context
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import HTMLResponse, Response
from starlette.routing import Route
from starlette.templating import Jinja2Templates

from rapport.report import chart_svg, curve_chart, delta_chart, fmt, paired_table, summary_table

from ._data import RunData
from ._memory import preference_rows, version_views
from ._timeline import align, timeline
from ._words import STOP_REASONS, column_decimals, fixed, pairs_text


@cache
def _environment() -> Environment:
    env = Environment(
        loader=PackageLoader("rapport.view", "templates"),
        autoescape=select_autoescape(default=True, default_for_string=True),
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.globals.update(fmt=fmt, q=quote, root="", folder=None, chart_svg=chart_svg)
    env.globals.update(stop_reasons=STOP_REASONS, fixed=fixed, column_decimals=column_decimals)
    env.filters["pairs"] = pairs_text
    for url in (session_url, memory_url, compare_url, sessions_url):
        env.globals[url.__name__] = _under_root(url)
    return env


def _under_root(url: Callable[..., str]) -> Callable[..., str]:
    """A URL helper for templates: its path under the page's ``root`` (the path a run's
    pages are mounted at in a folder of runs; empty for a single run)."""

    @pass_context
    def helper(context: Context, *args: Any, **kwargs: Any) -> str:
        return str(context.get("root") or "") + url(*args, **kwargs)

    return helper


FOLDER = "rapport.folder"
"""The ASGI scope key that holds the path of the folder's list of runs, when a run's pages
are served from a folder of runs."""


def session_url(condition: str, user_id: str, index: int) -> str:
    """The page of one session: its `index` (0-based, as stored) appears as the session
    number, counted from 1 like everywhere people read it."""
    return f"/session/{quote(condition, safe='')}/{quote(user_id, safe='')}/{index + 1}"


def memory_url(condition: str, user_id: str) -> str:
    """The memory-over-time page of a user under a condition."""
    return f"/memory/{quote(condition, safe='')}/{quote(user_id, safe='')}"


def compare_url(user_id: str, spec_id: str, a: str, b: str) -> str:
    """Two conditions side by side on one user's problem."""
    query = urlencode({"a": a, "b": b})
    return f"/compare/{quote(user_id, safe='')}/{quote(spec_id, safe='')}?{query}"


def sessions_url(**filters: Any) -> str:
    """The session list with filters (None values are left out); ``index`` (0-based, as
    stored) appears as ``session``, counted from 1."""
    if filters.get("index") is not None:
        filters["session"] = filters["index"] + 1
    filters.pop("index", None)
    query = urlencode({k: v for k, v in filters.items() if v is not None})
    return "/sessions" + (f"?{query}" if query else "")


def _int(request: Request, name: str, default: int | None = None) -> int | None:
    value = request.query_params.get(name)
    if value in (None, ""):
        return default
    try:
        return int(value)
    except ValueError:
        raise HTTPException(400, f"{name} must be a whole number") from None


class Viewer:
    """The pages of one run."""

    def __init__(self, data: RunData) -> None:
        self.data = data
        self.templates = Jinja2Templates(env=_environment())

    def _page(self, request: Request, name: str, **context: Any) -> Response:
        context.update(run=self.data.run, run_dir=str(self.data.run_dir))
        context.update(root=request.scope.get("root_path", ""), folder=request.scope.get(FOLDER))
        return self.templates.TemplateResponse(request, name, context)

    async def index(self, request: Request) -> Response:
        report = self.data.summary()
        store = self.data.store
        page = self.data.page(_int(request, "page"), store.user_count())
        return self._page(
            request,
            "index.html",
            report=report,
            summary=summary_table(report),
            paired=paired_table(report) if report.paired else None,
            users=store.user_ids(offset=page.offset, limit=page.size),
            conditions=list(report.conditions) or store.conditions(),
            page=page,
        )

    async def sessions(self, request: Request) -> Response:
        store = self.data.store
        condition = request.query_params.get("condition") or None
        user_id = request.query_params.get("user") or None
        number = _int(request, "session")
        index = number - 1 if number is not None else None
        status = request.query_params.get("status") or None
        total = store.count_rows(condition=condition, user_id=user_id, index=index, status=status)
        page = self.data.page(_int(request, "page"), total)
        rows = store.session_rows(
            condition=condition,
            user_id=user_id,
            index=index,
            status=status,
            offset=page.offset,
            limit=page.size,
        )
        report = self.data.summary()
        query = {"condition": condition, "user": user_id, "session": number, "status": status}
        return self._page(
            request,
            "sessions.html",
            rows=rows,
            page=page,
            query=query,
            metrics=report.metrics,
            places={m: column_decimals(r.scores.get(m) for r in rows) for m in report.metrics},
            conditions=list(report.conditions) or store.conditions(),
        )

    async def session(self, request: Request) -> Response:
        condition, user_id = request.path_params["condition"], request.path_params["user"]
        number = int(request.path_params["session"])
        index = number - 1
        store = self.data.store
        record = store.session(condition, user_id, index) if number >= 1 else None
        if record is None:
            raise HTTPException(404, f"no session {condition}/{user_id}/{number}")
        memory = store.memory_version(condition, user_id, record.memory_version)
        others = [c for c in self.data.conditions() if c != condition]
        return self._page(
            request,
            "session.html",
            record=record,
            timeline=timeline(record),
            usage=store.session_usage(condition, user_id, index),
            memory=memory,
            others=others,
            has_next=store.count_rows(condition=condition, user_id=user_id, index=index + 1) > 0,
        )

    async def compare(self, request: Request) -> Response:
        user_id, spec_id = request.path_params["user"], request.path_params["spec"]
        records = {r.condition: r for r in self.data.store.sessions_of_spec(user_id, spec_id)}
        if not records:
            raise HTTPException(404, f"no sessions of {user_id} on {spec_id}")
        order = [c for c in self.data.conditions() if c in records]
        order += [c for c in records if c not in order]
        a = request.query_params.get("a") or order[0]
        b = request.query_params.get("b") or (order[1] if len(order) > 1 else order[0])
        for name in (a, b):
            if name not in records:
                raise HTTPException(404, f"{user_id} has no session on {spec_id} under {name}")
        pair = [records[a], records[b]]
        return self._page(
            request, "compare.html", pair=pair, rows=align(pair), conditions=order, a=a, b=b
        )

    async def memory(self, request: Request) -> Response:
        condition, user_id = request.path_params["condition"], request.path_params["user"]
        store = self.data.store
        user = store.user(user_id)
        versions = store.memory_versions(condition=condition, user_id=user_id)
        sessions = store.sessions(condition=condition, user_id=user_id)
        if user is None and not versions:
            raise HTTPException(404, f"no user {user_id}")
        held = [str(p) for p in (user.spec.get("preferences", []) if user else [])]
        by_index = {r.index: r for r in sessions}
        return self._page(
            request,
            "memory.html",
            condition=condition,
            user_id=user_id,
            user=user,
            versions=version_views(versions, by_index),
            preferences=preference_rows(held, sessions, self.data.run.benchmark),
            sessions=sorted(by_index),
            conditions=self.data.conditions(),
        )

    async def curves(self, request: Request) -> Response:
        report = self.data.summary()

        def link(condition: str, index: int) -> str:
            return request.scope.get("root_path", "") + sessions_url(
                condition=condition, index=index
            )

        charts = [
            (m, curve_chart(report, m, link), delta_chart(report, m, link)) for m in report.metrics
        ]
        return self._page(request, "curves.html", report=report, charts=charts)

    async def errors(self, request: Request) -> Response:
        errors = self.data.errors()
        page = self.data.page(_int(request, "page"), len(errors))
        rows = errors[page.offset : page.offset + page.size]
        return self._page(request, "errors.html", rows=rows, page=page)

    async def style(self, request: Request) -> Response:
        return await stylesheet(request)


async def stylesheet(request: Request) -> Response:
    """The viewer's style sheet."""
    css = resources.files("rapport.view").joinpath("templates/style.css").read_text()
    return Response(css, media_type="text/css")


async def _not_found(request: Request, exc: Exception) -> Response:
    status = exc.status_code if isinstance(exc, HTTPException) else 500
    detail = exc.detail if isinstance(exc, HTTPException) else "server error"
    page = _environment().get_template("error.html").render(status=status, detail=detail)
    return HTMLResponse(page, status_code=status)


def create_app(run_dir: str | Path, *, data: RunData | None = None) -> Starlette:
    """The viewer of a run dir (the store is opened read-only).

    Raises:
        FileNotFoundError: the dir holds no run.
    """
    viewer = Viewer(data or RunData(run_dir))
    routes = [
        Route("/", viewer.index),
        Route("/sessions", viewer.sessions),
        Route("/session/{condition}/{user}/{session:int}", viewer.session),
        Route("/compare/{user}/{spec:path}", viewer.compare),
        Route("/memory/{condition}/{user}", viewer.memory),
        Route("/curves", viewer.curves),
        Route("/errors", viewer.errors),
        Route("/style.css", viewer.style),
    ]
    app = Starlette(routes=routes, exception_handlers={HTTPException: _not_found})
    app.state.data = viewer.data
    return app
