"""What the viewer's pages say for stored codes, and how a column of numbers is written."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from typing import Any

STOP_REASONS: dict[str, str] = {
    "user_ended": "the user ended it",
    "turn_cap": "the run's turn cap (--max-turns) was reached",
    "message_cap": "the benchmark's message or step limit was reached",
    "context_full": "the agent's prompt no longer fit its model's context",
    "environment": "the environment ended the episode",
    "agent_idle": "the agent stopped acting and the user had nothing to add",
}
"""`rapport.log.StopReason` values as a reader says them."""


def column_decimals(values: Iterable[float | None]) -> int:
    """Decimals for every number of one column, from its largest: 3 below 10, 1 below 100,
    else 0 (so a column never mixes ``2.000`` and ``12.0``)."""
    sizes = [abs(v) for v in values if v is not None and not math.isnan(v)]
    largest = max(sizes, default=0.0)
    return 3 if largest < 10 else 1 if largest < 100 else 0


def fixed(value: float, decimals: int) -> str:
    """`value` with `decimals` decimals (``nan`` as is)."""
    return "nan" if math.isnan(value) else f"{value:.{decimals}f}"


def pairs_text(values: Mapping[str, Any]) -> str:
    """``key=value`` pairs (lists joined by commas, mappings nested in braces), or ``-``."""
    return "; ".join(f"{k}={_value(v)}" for k, v in values.items()) or "-"


def _value(value: Any) -> str:
    if isinstance(value, Mapping):
        return "{" + pairs_text(value) + "}"
    if isinstance(value, (list, tuple)):
        return ",".join(_value(v) for v in value)
    if isinstance(value, bool):
        return str(value).lower()
    return "not set" if value is None else str(value)
