"""The agent under test."""

from ._agent import Agent

__all__ = ["Agent"]
