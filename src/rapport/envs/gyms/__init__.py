"""User-centric gyms: one text action interface, per-turn and trajectory rewards, horizon 16.

Moves: ``[action] <text>``, ``[search] <query>``, ``[answer] <text>``, ``[finish]``.
"""

from rapport.agents import SINGLE_LINE, ActionKind

from ._benchmark import GymBenchmark
from ._core import HORIZON, Action, Gym, Step, parse_action
from ._function import FunctionGym
from ._intention import IntentionGym
from ._options import PAPER_PROTOCOL, SMALL_OPTIONS, GymOptions
from ._persuade import PersuadeGym
from ._policy import condense_policy
from ._registry import GYMS, UnknownGymError, gymnasium_env, make_gym
from ._report import (
    behaviour_table,
    cost_table,
    paired_table,
    report_tables,
    reward_table,
    tasks_table,
)
from ._search import SearchGym
from ._tau import TauGym
from ._telepathy import TelepathyGym
from ._travel import TravelGym
from ._turtle import TurtleGym
from ._types import GymOutcome, GymTask
from ._userrl import USERRL_GYMS, GymDataError, LoadedGym, load_userrl, userrl_summary
from ._userrl_gyms import MoveReading, UserRLGym, userrl_move
from ._userrl_players import USERRL_PLAYERS, make_userrl_gym

__all__ = [
    "GYMS",
    "HORIZON",
    "PAPER_PROTOCOL",
    "SINGLE_LINE",
    "SMALL_OPTIONS",
    "USERRL_GYMS",
    "USERRL_PLAYERS",
    "Action",
    "ActionKind",
    "FunctionGym",
    "Gym",
    "GymBenchmark",
    "GymDataError",
    "GymOptions",
    "GymOutcome",
    "GymTask",
    "IntentionGym",
    "LoadedGym",
    "MoveReading",
    "PersuadeGym",
    "SearchGym",
    "Step",
    "TauGym",
    "TelepathyGym",
    "TravelGym",
    "TurtleGym",
    "UnknownGymError",
    "UserRLGym",
    "behaviour_table",
    "condense_policy",
    "cost_table",
    "gymnasium_env",
    "load_userrl",
    "make_gym",
    "make_userrl_gym",
    "paired_table",
    "parse_action",
    "report_tables",
    "reward_table",
    "tasks_table",
    "userrl_move",
    "userrl_summary",
]
