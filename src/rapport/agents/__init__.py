"""The agent under test, and how its messages are read as moves."""

from ._agent import Agent
from ._moves import SINGLE_LINE, Action, ActionKind, parse_action

__all__ = ["SINGLE_LINE", "Action", "ActionKind", "Agent", "parse_action"]
