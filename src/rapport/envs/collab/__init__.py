"""MultiSessionCollab: simulated users with preferences, one problem per session."""

from ._ablation import DEFAULT_LEARNED_MEMORY, CollabAblationBenchmark
from ._agreement import agreement_table, enforcement_agreement
from ._benchmark import CollabBenchmark, CollabOptions
from ._problems import Problem, ProblemSourceError, is_correct, load_problems
from ._session import CollabSession, SessionSettings, problem_text

__all__ = [
    "DEFAULT_LEARNED_MEMORY",
    "CollabAblationBenchmark",
    "CollabBenchmark",
    "CollabOptions",
    "CollabSession",
    "Problem",
    "ProblemSourceError",
    "SessionSettings",
    "agreement_table",
    "enforcement_agreement",
    "is_correct",
    "load_problems",
    "problem_text",
]
