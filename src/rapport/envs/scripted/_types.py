"""The scripted benchmark's record types."""

from __future__ import annotations

from typing import Literal

from rapport.log import BaseOutcome, BaseTask


class ScriptedTask(BaseTask):
    """The scripted benchmark: a topic to talk about."""

    kind: Literal["scripted"] = "scripted"
    topic: str


class ScriptedOutcome(BaseOutcome):
    kind: Literal["scripted"] = "scripted"
    word: str
    """The user's favourite word (what ``hit`` looks for)."""
