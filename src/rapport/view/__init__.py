"""``rapport view``: a local web app to read a run: its summary, sessions turn by turn with
what memory recalled and what the user enforced, two conditions side by side, memory over
time, and per-session curves; for a folder of runs, a list of them and their comparison.
The store is only read."""

from ._app import compare_url, create_app, memory_url, session_url, sessions_url
from ._data import PAGE_SIZE, Page, RunData
from ._folder import RunFolder, create_folder_app
from ._serve import bind, open_runs, serve, start_server

__all__ = [
    "PAGE_SIZE",
    "Page",
    "RunData",
    "RunFolder",
    "bind",
    "compare_url",
    "create_app",
    "create_folder_app",
    "memory_url",
    "open_runs",
    "serve",
    "session_url",
    "sessions_url",
    "start_server",
]
