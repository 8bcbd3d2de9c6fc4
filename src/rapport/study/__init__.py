"""``rapport study``: the real-user study app (MultiSessionCollab's Section 7). Participants
open an invite link, consent, read their preference card, work through condition blocks of
three sessions with the agent, and rate each session; every session lands in the same run
store as a simulated one, so ``rapport report`` and ``rapport view`` read it."""

from ._app import MAX_MESSAGES, create_app
from ._create import (
    INVITES_FILE,
    RESEARCHER_FILE,
    StudyCreated,
    create_study,
    is_study_dir,
    models_ready,
    study_config,
)
from ._db import STUDY_FILE, SessionKey, StudyDB, TurnOrderError
from ._guard import MAX_BODY, csrf_token
from ._live import LiveSession, StudyRuntime, build_models
from ._provenance import describe_serving, record_serving
from ._render import missing_extra, render_markdown
from ._reply import RETRY_DELAYS_S, PatientAgent, ReplyAbandoned
from ._researcher import progress_rows
from ._serve import HEADER_TIMEOUT_S, HOST, Quiet, bind, max_connections, serve, start_study_server

__all__ = [
    "HEADER_TIMEOUT_S",
    "HOST",
    "INVITES_FILE",
    "MAX_BODY",
    "MAX_MESSAGES",
    "RESEARCHER_FILE",
    "RETRY_DELAYS_S",
    "STUDY_FILE",
    "LiveSession",
    "PatientAgent",
    "Quiet",
    "ReplyAbandoned",
    "SessionKey",
    "StudyCreated",
    "StudyDB",
    "StudyRuntime",
    "TurnOrderError",
    "bind",
    "build_models",
    "create_app",
    "create_study",
    "csrf_token",
    "describe_serving",
    "is_study_dir",
    "max_connections",
    "missing_extra",
    "models_ready",
    "progress_rows",
    "record_serving",
    "render_markdown",
    "serve",
    "start_study_server",
    "study_config",
]
