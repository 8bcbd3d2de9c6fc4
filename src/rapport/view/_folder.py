"""The viewer of a folder of runs: a list of the runs (benchmark, models, when, size,
status), their comparison, and each run's own pages under ``/run/NAME/``."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Mount, Route
from starlette.templating import Jinja2Templates
from starlette.types import Receive, Scope, Send

from rapport.report import (
    CompareError,
    Comparison,
    RunOverview,
    compare_runs,
    comparison_parts,
    find_runs,
    models_text,
    run_overview,
)

from ._app import FOLDER, _environment, _not_found, create_app, stylesheet
from ._data import RunData


class RunFolder:
    """A folder whose subfolders are run dirs; each run is opened (read-only) on its first
    visit and kept open until `close`.

    Raises:
        FileNotFoundError: the folder holds no run dir.
    """

    def __init__(self, folder: str | Path) -> None:
        self.folder = Path(folder)
        if not find_runs(self.folder):
            raise FileNotFoundError(f"no run found in {self.folder} or its folders")
        self._apps: dict[str, Starlette] = {}
        self._data: list[RunData] = []
        self._lock = threading.Lock()

    def run_dirs(self) -> dict[str, Path]:
        """Name -> run dir, as the folder holds them now (a run started later shows up)."""
        return {p.name: p for p in find_runs(self.folder)}

    def app_of(self, name: str) -> Starlette:
        """The pages of one run.

        Raises:
            HTTPException: no run of that name (404).
        """
        with self._lock:
            if name not in self._apps:
                run_dir = self.run_dirs().get(name)
                if run_dir is None:
                    raise HTTPException(404, f"no run {name} in {self.folder}")
                try:
                    data = RunData(run_dir)
                except FileNotFoundError as exc:
                    raise HTTPException(404, str(exc)) from exc
                self._data.append(data)
                self._apps[name] = create_app(run_dir, data=data)
            return self._apps[name]

    def close(self) -> None:
        """Close every run opened."""
        with self._lock:
            for data in self._data:
                data.close()
            self._data.clear()
            self._apps.clear()


def _overviews(folder: RunFolder) -> tuple[list[RunOverview], list[tuple[str, str]]]:
    """The runs that read, and (name, why) for those that do not."""
    runs: list[RunOverview] = []
    unreadable: list[tuple[str, str]] = []
    for name, run_dir in folder.run_dirs().items():
        try:
            runs.append(run_overview(run_dir, name))
        except (FileNotFoundError, ValueError) as exc:
            unreadable.append((name, str(exc)))
    return runs, unreadable


def _size(n: int) -> str:
    for unit in ("B", "kB", "MB"):
        if n < 1000:
            return f"{n:.0f} {unit}"
        n //= 1000
    return f"{n} GB"


def _when(timestamp: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M", time.localtime(timestamp))


class FolderViewer:
    """The folder's own pages."""

    def __init__(self, folder: RunFolder) -> None:
        self.folder = folder
        self.templates = Jinja2Templates(env=_environment())

    def _page(self, request: Request, name: str, **context: Any) -> Response:
        context.update(folder_dir=str(self.folder.folder), models_text=models_text)
        context.update(size=_size, when=_when, root=request.scope.get("root_path", ""))
        return self.templates.TemplateResponse(request, name, context)

    async def index(self, request: Request) -> Response:
        runs, unreadable = _overviews(self.folder)
        return self._page(request, "folder.html", runs=runs, unreadable=unreadable)

    async def compare(self, request: Request) -> Response:
        chosen = request.query_params.getlist("run")
        dirs = self.folder.run_dirs()
        missing = [n for n in chosen if n not in dirs]
        if missing:
            raise HTTPException(404, f"no run {missing[0]} in {self.folder.folder}")
        runs, _ = _overviews(self.folder)
        names = [r.label for r in runs if not chosen or r.label in chosen]
        groups: dict[str, list[str]] = {}
        for run in runs:
            if run.label in names:
                groups.setdefault(run.benchmark, []).append(run.label)
        comparisons = [self._comparison([dirs[n] for n in group]) for group in groups.values()]
        return self._page(request, "folder_compare.html", comparisons=comparisons)

    @staticmethod
    def _comparison(run_dirs: list[Path]) -> dict[str, Any]:
        try:
            comparison: Comparison = compare_runs(run_dirs)
        except (CompareError, FileNotFoundError) as exc:
            raise HTTPException(400, str(exc)) from exc
        return comparison_parts(comparison)


class _RunPages:
    """ASGI: ``/run/NAME/...`` answered by that run's viewer, which builds its links under
    the mount's root path."""

    def __init__(self, folder: RunFolder) -> None:
        self.folder = folder

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        name = scope["path_params"]["name"]
        app = self.folder.app_of(name)
        root = scope.get("root_path", "")
        outer = root[: len(root) - len(f"/run/{name}")] if root.endswith(f"/run/{name}") else ""
        await app({**scope, FOLDER: outer}, receive, send)


def create_folder_app(folder: RunFolder) -> Starlette:
    """The viewer of a folder of runs."""
    pages = FolderViewer(folder)
    routes = [
        Route("/", pages.index),
        Route("/compare", pages.compare),
        Route("/style.css", stylesheet),
        Mount("/run/{name}", app=_RunPages(folder)),
    ]
    app = Starlette(routes=routes, exception_handlers={HTTPException: _not_found})
    app.state.folder = folder
    return app
