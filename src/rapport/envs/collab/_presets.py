"""The ``small`` preset: MultiSessionCollab adapted to small embedded models."""

from __future__ import annotations

from .._presets import Preset

_SMALL_OPTIONS = {
    "session": "guarded",
    "verdicts": "checkers",
    "grader": "match",
    "agent_length_rule": True,
    "agent_temperature": 0.7,
    "agent_top_p": 0.95,
    "agent_max_tokens": 512,
}
"""The guarded user (it opens, reads its last four messages, code extracts its draft and
replaces role slips), the checkers decide enforcement, code grades the draft, and the agent
is asked for short replies at a lower temperature."""

_SMALL_MEMORY = {
    "reflection": {"form": "list"},
}
"""Reflection keeps a capped list of short notes, picked per turn by number."""

SMALL_PRESET = Preset(
    name="small",
    summary="Small embedded models: a code-guarded user with a short window, checkers "
    "deciding enforcement, code grading, an agent length rule, capped reflection notes; "
    "in the gyms, a lenient move reader, repeated moves asked again, 200-token moves.",
    options={
        "collab": _SMALL_OPTIONS,
        "collab-ablation": _SMALL_OPTIONS,
    },
    memory_options={"collab": _SMALL_MEMORY, "collab-ablation": _SMALL_MEMORY},
)
"""``--preset small`` (what ``rapport demo`` and the embedded-model tests run)."""
