"""The paper-era date rule: date and time slot values read by the `dateparser` package.

PRefine's paper-era scorer read a value in a slot whose name holds ``time`` (and a digit) as
a clock time ``HH:MM`` and one in a slot whose name holds ``date`` or ``day`` as ``MM-DD``,
each with `dateparser`, preferring future dates and parsing leniently; a value it cannot
read stays as written. The later exp7 scorer replaced this with fixed patterns
(`rapport.envs.mpt.normalize`).

Relative expressions (``tomorrow``, ``Friday``) are read against a fixed day here, so that a
run scores the same on any day; the paper-era scorer read them against the day it ran.
"""

from __future__ import annotations

import datetime as dt
from functools import lru_cache
from types import ModuleType
from typing import Any

INSTALL_HINT = "pip install 'rapport-toolkit[mpt]' (or pip install dateparser)"
RELATIVE_BASE = dt.datetime(2026, 1, 1)
"""The day relative dates are read against."""


class DateparserMissing(ImportError):
    """The ``dateparser`` date rule was asked for and the package is not installed."""


def load_dateparser() -> ModuleType:
    """The `dateparser` module.

    Raises:
        DateparserMissing: it is not installed (the message says how to install it).
    """
    try:
        import dateparser
    except ImportError as exc:
        raise DateparserMissing(
            f"the dateparser date rule needs the dateparser package: {INSTALL_HINT}"
        ) from exc
    return dateparser


def _settings() -> dict[str, Any]:
    return {
        "PREFER_DATES_FROM": "future",
        "STRICT_PARSING": False,
        "RELATIVE_BASE": RELATIVE_BASE,
    }


@lru_cache(maxsize=8192)
def dateparser_value(slot: str, text: str) -> str:
    """A slot value under the paper-era rule: ``HH:MM`` in a ``*time*`` slot (when the text
    has a digit), ``MM-DD`` in a ``*date*`` / ``*day*`` slot, else the text unchanged.

    Raises:
        DateparserMissing: `dateparser` is not installed.
    """
    name = slot.lower()
    if "time" in name:
        if not any(c.isdigit() for c in text):
            return text  # "evening", "now": not read as a time
        form = "%H:%M"
    elif "date" in name or "day" in name:
        form = "%m-%d"
    else:
        return text
    parser = load_dateparser()
    try:
        parsed = parser.parse(text, settings=_settings())
    except Exception:  # dateparser raises assorted errors on odd text; the rule keeps it
        return text
    return parsed.strftime(form) if parsed is not None else text
