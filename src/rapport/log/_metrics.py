"""A metric as its benchmark declares it, once: its name, what a value of it is computed
over (the regime, the unit: instances, sessions or users), how the values are reduced, and
which way is better. Every table that shows the metric titles it from this declaration, so
two numbers under one name always say over what each was computed."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict

Unit = Literal["instances", "sessions", "users"]
"""What one value of a metric is computed on."""
Reducer = Literal["mean", "micro"]
"""How values are combined: their ``mean``, or ``micro`` (a ratio of summed counts, such as
micro-F1 over every instance's true positives, predictions and gold)."""


class Metric(BaseModel):
    """One metric of a benchmark."""

    model_config = ConfigDict(frozen=True)

    name: str
    """The key of the metric in a session's scores (or in a benchmark's own tables)."""
    label: str = ""
    """How a benchmark's own tables title it (``P-EM``); empty: the name."""
    regime: str = ""
    """The part of the evaluation it is defined on, in the paper's words (MPT's
    ``context-free`` queries); empty: every eval session."""
    over: Unit = "sessions"
    reducer: Reducer = "mean"
    lower_is_better: bool = False

    @property
    def title(self) -> str:
        """The label, else the name."""
        return self.label or self.name

    def population(self, regime: str | None = None) -> str:
        """What a value is computed over, as a table says it: ``micro over context-free
        instances``; `regime` names what a table pools instead of the declared regime."""
        where = self.regime if regime is None else regime
        return f"{self.reducer} over {where + ' ' if where else ''}{self.over}"

    def column(self, regime: str | None = None) -> str:
        """A table column's title: ``F1 (micro over context-free instances)``."""
        return f"{self.title} ({self.population(regime)})"


def plain_metrics(names: tuple[str, ...], lower_is_better: frozenset[str]) -> tuple[Metric, ...]:
    """Declarations of metrics known only by name and direction (a benchmark that declares
    ``metrics`` and ``lower_is_better`` alone)."""
    return tuple(Metric(name=n, lower_is_better=n in lower_is_better) for n in names)
