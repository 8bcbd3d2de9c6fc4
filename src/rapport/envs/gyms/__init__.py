"""User-centric gyms: one text action interface, per-turn and trajectory rewards, horizon 16.

Moves: ``[action] <text>``, ``[search] <query>``, ``[answer] <text>``, ``[finish]``.
"""

from rapport.agents import SINGLE_LINE, ActionKind

from ._benchmark import GymBenchmark, GymOptions
from ._core import HORIZON, Action, Gym, Step, parse_action
from ._function import FunctionGym
from ._intention import IntentionGym
from ._persuade import PersuadeGym
from ._policy import condense_policy
from ._registry import GYMS, UnknownGymError, gymnasium_env, make_gym
from ._report import (
    behaviour_table,
    cost_table,
    paired_table,
    report_tables,
    reward_table,
)
from ._search import SearchGym
from ._tau import TauGym
from ._telepathy import TelepathyGym
from ._travel import TravelGym
from ._turtle import TurtleGym
from ._types import GymOutcome, GymTask

__all__ = [
    "GYMS",
    "HORIZON",
    "SINGLE_LINE",
    "Action",
    "ActionKind",
    "FunctionGym",
    "Gym",
    "GymBenchmark",
    "GymOptions",
    "GymOutcome",
    "GymTask",
    "IntentionGym",
    "PersuadeGym",
    "SearchGym",
    "Step",
    "TauGym",
    "TelepathyGym",
    "TravelGym",
    "TurtleGym",
    "UnknownGymError",
    "behaviour_table",
    "condense_policy",
    "cost_table",
    "gymnasium_env",
    "make_gym",
    "paired_table",
    "parse_action",
    "report_tables",
    "reward_table",
]
