"""PrefIx's two added toolboxes, ``TradingBeaver`` and ``TravelBeaver``, as our own backends.

The paper's code registers both next to bfcl-eval's eight classes: ``TradingBeaver`` offers
the stock-trading functions of ``TradingBot`` and ``TravelBeaver`` a read-only slice of
``TravelAPI`` (no sign-in, booking or card registration). The classes here have the same
function names and parameters and keep their state in public attributes, so bfcl-eval's
state and response checks compare them as they compare its own backends. Everything is
deterministic: identifiers and timestamps come from a seeded generator, ages from a fixed
date.
"""

from __future__ import annotations

import functools
import json
from datetime import datetime
from importlib import resources
from typing import Any

NOW = datetime(2024, 9, 1, 10, 30)
"""The backends' clock: the trading floor's current time and the date ages are taken at."""

DOC_FILES = {"TradingBeaver": "trading_beaver.jsonl", "TravelBeaver": "travel_beaver.jsonl"}
"""Our tool docs of the two toolboxes, in bfcl-eval's function-doc layout, one file each."""


@functools.cache
def toolbox_docs(class_name: str) -> tuple[dict[str, Any], ...]:
    """The function docs of one of the two toolboxes."""
    text = resources.files(__package__).joinpath("toolbox_func_doc", DOC_FILES[class_name])
    lines = text.read_text("utf-8").splitlines()
    return tuple(json.loads(line) for line in lines if line.strip())
