"""PrefIx options, task eligibility and the judge rubric."""

from __future__ import annotations

import functools
from collections.abc import Sequence
from importlib import resources
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, field_validator

from rapport.judges import Dimension
from rapport.log import MAX_SESSIONS

from .._protocol import paper_data
from ._executor import SafeExecutor
from ._settings import Category, Setting, all_settings, extra_settings, get_setting
from ._tasks import BfclTask


def _split(value: Any) -> Any:
    return [v.strip() for v in value.split(",") if v.strip()] if isinstance(value, str) else value


class PrefixOptions(BaseModel):
    """Benchmark options (``--condition``, ``--settings`` ... on the command line; unknown
    names are refused)."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    condition: list[Literal["no_p", "p"]] = Field(
        default_factory=lambda: ["no_p", "p"],  # type: ignore[arg-type]
        min_length=1,
    )
    """``no_p``: generic instructions; ``p``: a sample interaction with implicit feedback."""
    settings: list[str] = Field(
        default_factory=lambda: ["all"], validate_default=True, min_length=1
    )
    """Setting ids, ``all`` (the paper's 31) or ``extras`` (ours outside the 31)."""
    combine: int = Field(default=1, ge=1, le=4)
    """Preferences each user holds (several combined: settings of different attributes)."""
    tasks: int | None = Field(default=None, ge=1, le=MAX_SESSIONS)
    """Tasks (sessions) per user; default: the run's ``--sessions``."""
    judge_repeats: int = Field(default=1, ge=1, le=100)
    """Samples per judge (the first greedy, the rest sampled): feeds the CV over repeats."""
    reliability: Literal["repeats", "paper"] = "repeats"
    """Judge stability: ``repeats`` (CV over every session's ``judge_repeats``) or the
    paper's protocol, ``paper``: ``reliability_runs`` judge runs on ``reliability_samples``
    sessions per condition (the first session of the first users), the CV over those."""
    reliability_samples: int = Field(default=5, ge=1, le=1000)
    """Sessions per condition the ``paper`` protocol judges again (the paper: 5)."""
    reliability_runs: int = Field(default=20, ge=2, le=1000)
    """Judge runs on each of those sessions under the ``paper`` protocol (the paper: 20)."""
    result_chars: int | None = Field(default=None, ge=200)
    """Longest system-tool result the agent reads, in characters (longer ones are cut with
    a note); None (default): whole, as bfcl-eval. For small-context local models, since
    long_context results reach 30,000 characters."""
    judge_chars: int | None = Field(default=None, ge=1000)
    """Characters of the transcript the UX judges read (the first turns and as many of the
    last as fit, tool results cut to 300); None (default): the whole log, cut to 12,000 only
    when it is past a judge's context, with a note on the session."""
    rubric_from: str | None = Field(
        default=None, json_schema_extra=paper_data("PrefIX's rubric, --rubric-from CHECKOUT")
    )
    """A PrefIX checkout: the UX judges score its rubric (``LIKERT_DEFINITIONS``) with its
    prompt template and persona descriptions; None: ours (package data)."""
    max_messages: int = Field(default=180, ge=4)
    """Messages (user, agent and tool turns) after which a session stops."""
    categories: list[Category] = Field(
        default_factory=lambda: ["long_context"],  # type: ignore[arg-type]
        min_length=1,
    )
    """BFCL categories the tasks come from (coarsened); information-collection settings
    take ``miss_param`` tasks whatever this says, as in the paper."""
    task_data: str | None = None
    """Where the BFCL tasks come from: a folder laid out like bfcl-eval's ``data/`` folder or
    a bfcl-eval wheel, with BFCL v3 or v4 multi-turn files; None: the installed bfcl-eval's
    (v4)."""
    coarsened: str | None = Field(
        default=None,
        json_schema_extra=paper_data("PrefIX's fixed coarsened tasks, --coarsened CHECKOUT"),
    )
    """A PrefIX checkout (or its ``Processing/`` folder): settings with a fixed-task file
    there run on the paper's fixed coarsened tasks (needs v3 ``task_data``); the others are
    coarsened by the run's model."""

    _split_lists = field_validator("condition", "settings", "categories", mode="before")(_split)

    @field_validator("settings")
    @classmethod
    def _known(cls, value: list[str]) -> list[str]:
        groups = {
            "all": [s.id for s in all_settings()],
            "extras": [s.id for s in extra_settings()],
        }
        value = [v for item in value for v in groups.get(item, [item])]
        repeated = sorted({v for v in value if value.count(v) > 1})
        if repeated:
            raise ValueError(f"setting {repeated[0]!r} is listed twice (one user per setting)")
        for setting_id in value:
            try:
                get_setting(setting_id)
            except KeyError as exc:
                raise ValueError(exc.args[0]) from None
        return value


def combined_users(settings: Sequence[str], combine: int) -> list[list[str]]:
    """Per user, the settings held: each setting with the next ones of other attributes."""
    if combine == 1:
        return [[s] for s in settings]
    groups = []
    for i, first in enumerate(settings):
        group = [first]
        for other in [*settings[i + 1 :], *settings[:i]]:
            attributes = {get_setting(s).attribute for s in group}
            if len(group) < combine and get_setting(other).attribute not in attributes:
                group.append(other)
        groups.append(group)
    return groups


def write_count(task: BfclTask) -> int:
    """State-changing calls among the task's reference calls (navigation excluded)."""
    if task.writes is None:
        executor = SafeExecutor(task)
        task.writes = sum(executor.run(call).wrote for call in task.reference_calls)
    return task.writes


def eligible(setting: Setting, task: BfclTask) -> bool:
    """Whether the task gives the setting room (enough writes; a call to fail)."""
    if setting.needs.writes and write_count(task) < setting.needs.writes:
        return False
    return not (setting.needs.failure and not task.reference_calls)


ALIGNMENT_DIMENSION = "preference_alignment"
"""The judge dimension scored apart from UX: how closely the agent followed the preference."""


@functools.cache
def ux_dimensions() -> tuple[Dimension, ...]:
    """The judge rubric: seven UX dimensions and preference alignment (last)."""
    text = resources.files(__package__).joinpath("ux_rubric.yaml").read_text("utf-8")
    return tuple(Dimension.model_validate(row) for row in yaml.safe_load(text))


def experience_dimensions() -> tuple[str, ...]:
    """The seven UX dimensions: the UX score is their mean (preference alignment apart)."""
    return tuple(d.id for d in ux_dimensions() if d.id != ALIGNMENT_DIMENSION)


def judge_instructions() -> str:
    """The UX judge's instructions."""
    return resources.files(__package__).joinpath("judge_prompt.md").read_text("utf-8")
