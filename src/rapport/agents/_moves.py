"""How an agent message is read as one move (the gyms' format; memories that compare
situations read moves the same way).

An agent's message in a gym holds one move: ``[action] ...`` (a question or a query),
``[search] ...``, ``[answer] ...`` or ``[finish]``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

ActionKind = Literal["action", "search", "answer", "finish", "invalid"]
_SYNONYMS = {
    "ask": "action",
    "question": "action",
    "query": "action",
    "guess": "answer",
    "final answer": "answer",
}
_NAMES = "action|search|answer|finish|ask|question|query|guess|final answer"
_TAG = re.compile(rf"\[\s*({_NAMES})\s*\]", re.IGNORECASE)
_LABEL = re.compile(
    rf"^[ \t>#*_`-]*({_NAMES})[*_`]*[ \t]*(?::|-(?=\s))[*_`]*", re.IGNORECASE | re.MULTILINE
)
SINGLE_LINE = {"action", "search"}


@dataclass(frozen=True)
class Action:
    """One parsed agent move: ``[action] text``, ``[search] q``, ``[answer] text``, ``[finish]``."""

    kind: ActionKind
    text: str = ""


def parse_action(message: str) -> Action:
    """Parse an agent message into its move.

    The first move written at the start of a line wins: a model that goes on to imagine the
    user's reply and its own next moves is cut off there. With no move at a line start, the
    last tag in the message wins (a move quoted inline after some reasoning).

    Lenient with what small models write: any case, a colon after the tag, bold or code
    marks around it, ``Answer: ...`` labels at a line start when no bracketed tag is
    present, and the synonyms ask / question / query (``action``) and guess / final answer
    (``answer``). An ``[action]`` or ``[search]`` move is its first line; an ``[answer]``
    runs to the next move or the end of the message.
    """
    matches = list(_TAG.finditer(message)) or list(_LABEL.finditer(message))
    if not matches:
        return Action(kind="invalid", text=message.strip())
    at_line_start = [m for m in matches if _starts_line(message, m.start())]
    chosen = at_line_start[0] if at_line_start else matches[-1]
    later = [m.start() for m in at_line_start if m.start() > chosen.start()]
    name = " ".join(chosen.group(1).lower().split())
    kind = _SYNONYMS.get(name, name)
    text = message[chosen.end() : later[0] if later else len(message)]
    text = _unmarked(text)
    if kind in SINGLE_LINE:
        text = text.split("\n", 1)[0].strip()
    return Action(kind=kind, text=text.strip("`\"'*").strip())  # type: ignore[arg-type]


_SIGNED = re.compile(r"-\.?\d")


def _unmarked(text: str) -> str:
    """The move's text without the colon or markup before it; a dash that signs a number
    (``[answer] -16``) stays."""
    text = text.lstrip(" \t:*_`")
    while text.startswith("-") and not _SIGNED.match(text):
        text = text[1:].lstrip(" \t:*_`")
    return text.strip()


def _starts_line(message: str, index: int) -> bool:
    """Whether only markup (spaces, ``>``, ``#``, ``*``, ``_``, backticks, ``-``) precedes
    ``index`` on its line."""
    line_start = message.rfind("\n", 0, index) + 1
    return not message[line_start:index].strip(" \t>#*_`-")
