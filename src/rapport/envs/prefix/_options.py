"""PrefIx options, task eligibility and the judge rubric."""

from __future__ import annotations

import functools
from collections.abc import Sequence
from importlib import resources
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from rapport.judges import Dimension
from rapport.log import MAX_SESSIONS, ExperimentConfig

from .._paper import PaperSetting, Reader, model_of, option
from .._protocol import paper_data
from ._executor import SafeExecutor
from ._settings import (
    Category,
    Setting,
    all_settings,
    extra_settings,
    get_setting,
    interaction_tools,
)
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
    reliability: Literal["repeats", "paper"] = "paper"
    """Judge stability: the paper's protocol, ``paper`` (default, Section 6):
    ``reliability_runs`` judge runs on ``reliability_samples`` sessions per condition (the
    first session of the first users), their spread reported and kept out of the scores;
    or ``repeats``: ``judge_repeats`` runs on every session, all averaged into the scores."""
    judging: Literal["per_dimension", "all_at_once"] = "per_dimension"
    """``per_dimension`` (default, the paper's judge runner): one call per dimension with
    the persona, its description and trajectory hints, over the transcript's first and last
    ``judge_chars // 2`` characters (8,000 in all by default), at ``judge_temperature``;
    ``all_at_once``: ours, one call scoring every dimension over the whole log (greedy,
    repeats at T = 0.7)."""
    judge_temperature: float = Field(default=0.1, ge=0.0, le=2.0)
    """Temperature of every per-dimension judge call (the paper: 0.1)."""
    reliability_samples: int = Field(default=5, ge=1, le=1000)
    """Sessions per condition the ``paper`` protocol judges again (the paper: 5)."""
    reliability_runs: int = Field(default=20, ge=2, le=1000)
    """Judge runs on each of those sessions under the ``paper`` protocol (the paper: 20)."""
    result_chars: int | None = Field(default=None, ge=200)
    """Longest system-tool result the agent reads, in characters (longer ones are cut with
    a note); None (default): whole, as bfcl-eval. For small-context local models, since
    long_context results reach 30,000 characters."""
    judge_chars: int | None = Field(default=None, ge=1000)
    """Characters of the transcript the UX judges read. Per dimension: the first and last
    halves of this many (None: the paper's 8,000). All at once: the first turns and as many
    of the last as fit, tool results cut to 300 (None: the whole log, cut to 12,000 only
    when it is past a judge's context, with a note on the session)."""
    rubric_from: str | None = Field(
        default=None, json_schema_extra=paper_data("PrefIX's rubric, --rubric-from CHECKOUT")
    )
    """A PrefIX checkout: the UX judges score its rubric (``LIKERT_DEFINITIONS``) with its
    prompt template and persona descriptions; None: ours (package data)."""
    live_failures: bool = False
    """Inject one transient failure live (a seeded reference call fails once) in the
    sessions of the robustness settings; False (default, as PrefIX): failures appear only in
    the sample histories the agent reads under ``p``, none while it works."""
    matching: Literal["prefix", "canonical"] = "prefix"
    """How accuracy matches the agent's calls with the reference: ``prefix`` (default),
    PrefIX's ``multi_turn_checker_ratio`` (normalised call strings in the agent's argument
    order: the paper's numbers); ``canonical``, rapport's (arguments bound and compared by
    value, so keyword order, positional references and quoting do not matter)."""
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

    @model_validator(mode="after")
    def _repeats_need_their_protocol(self) -> PrefixOptions:
        if self.judge_repeats > 1 and self.reliability != "repeats":
            raise ValueError("judge_repeats needs reliability 'repeats' (--reliability repeats)")
        return self


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


def _fixed(value: Any) -> Reader:
    """A setting rapport does one way whatever the config says."""
    return lambda _config: value


def _judge_window(config: ExperimentConfig) -> Any:
    options = PrefixOptions.model_validate(config.options)
    if options.judging != "per_dimension":
        return f"{options.judging}: {options.judge_chars or 'whole log'}"
    return options.judge_chars or 8000


def _reliability(config: ExperimentConfig) -> Any:
    o = PrefixOptions.model_validate(config.options)
    if o.reliability == "repeats":
        return f"repeats: {o.judge_repeats} runs on every session"
    return f"{o.reliability_runs} runs on {o.reliability_samples} samples, out of the scores"


def _data_source(config: ExperimentConfig) -> Any:
    o = PrefixOptions.model_validate(config.options)
    if o.coarsened is None:
        return "BFCL tasks coarsened by the run's model"
    return "PrefIX's fixed tasks, BFCL v3 ground truth from --task-data"


def _tool_count(_config: ExperimentConfig) -> Any:
    return len(interaction_tools())


PAPER_PROTOCOL: tuple[PaperSetting, ...] = (
    PaperSetting(
        "1. samples, ground truth and backends",
        "PrefIX's 282 published samples (the text: 283) on its possible_answer and backends",
        "§4.2; PrefIX Processing/, bfcl_eval/data/possible_answer, func_source_code",
        "--coarsened CHECKOUT, --task-data",
        _data_source,
        note="PrefIX's own possible_answer and backends are not read yet: --task-data takes "
        "bfcl-eval 2025.6.8's v3 answers, which differ from PrefIX's copy in 42 of the 282 "
        "samples (book_flight's travel_cost)",
    ),
    PaperSetting(
        "2. turn loop",
        "the user speaks after every tool-executing step; ends on its token or 3 repeats",
        "PrefIX base_handler.inference_multi_turn_FC",
        "(none)",
        _fixed("up to 8 tool rounds per user message; ends on the token or --max-messages"),
        note="not built yet: control tools with task calls in one step are not held",
    ),
    PaperSetting(
        "3. agent prompt",
        "every preference's tool sequence in both conditions; P: fixed per-setting history",
        "§4.1; PrefIX prompts/, Preference_Interaction_History/",
        "(none)",
        _fixed("no catalogue; P: histories generated from the setting's pattern"),
        note="not built yet (--prompts-from CHECKOUT)",
    ),
    PaperSetting(
        "4. live failures",
        False,
        "PrefIX base_handler (no injection); user_simulator/history/history_template/",
        "options.live_failures",
        option(PrefixOptions, "live_failures"),
        note="histories: PrefIX seeds failure lines for six settings (none for "
        "tool_abortion); ours seed one in all eight robustness settings' histories",
    ),
    PaperSetting(
        "5. judging",
        "per_dimension",
        "§3.4.2; PrefIX openrouter_judge.generate_judgment_with_openrouter",
        "options.judging",
        option(PrefixOptions, "judging"),
    ),
    PaperSetting(
        "5. judge temperature",
        0.1,
        "§4.3; PrefIX openrouter_judge (temperature=0.1)",
        "options.judge_temperature",
        option(PrefixOptions, "judge_temperature"),
    ),
    PaperSetting(
        "5. judge transcript window (characters, head and tail)",
        8000,
        "PrefIX run_gemini_judge (max_transcript_chars=8000)",
        "options.judge_chars",
        _judge_window,
    ),
    PaperSetting(
        "5. judge rubric and prompt",
        "PrefIX's rubric and prompt",
        "App. E; PrefIX LLM_as_a_judge/",
        "options.rubric_from",
        lambda c: (
            "PrefIX's rubric and prompt"
            if PrefixOptions.model_validate(c.options).rubric_from
            else "ours (same dimensions and anchors in our words)"
        ),
        note="the paper's text is read from a checkout at run time (--rubric-from)",
    ),
    PaperSetting(
        "6. judge stability runs",
        "20 runs on 5 samples, out of the scores",
        "§6, Table 5; PrefIX run_gemini_judge_repro",
        "options.reliability, reliability_runs, reliability_samples",
        _reliability,
    ),
    PaperSetting(
        "7. agent models (one run each; judged by all of them)",
        ["claude-opus-4-5", "claude-sonnet-4-5", "gemini-3-flash", "kimi-k2"],
        "§4.2, Tables 2-4",
        "--model agent=SPEC, one run per model; rapport compare --paper-tables",
        model_of("agent"),
        note="Tables 2-5 across runs: rapport compare RUN... --paper-tables",
    ),
    PaperSetting(
        "9. interaction tools (10 narrative, 3 control)",
        13,
        "Table 8, App. D; PrefIX model_handler/interaction_handlers.py",
        "(none)",
        _tool_count,
        note="the 14th, display_params_logic, is PrefIX's Message_display_params_logic: its "
        "interaction instruction and param_high's trajectory name it, but its handlers (the "
        "tools a model can call) are the 13; ours offers it for param_high's rationale",
    ),
    PaperSetting(
        "tool-use accuracy matching",
        "prefix",
        "§3.4.1; PrefIX multi_turn_checker_ratio.py",
        "options.matching",
        option(PrefixOptions, "matching"),
    ),
    PaperSetting(
        "messages per session",
        180,
        "§4.2; PrefIX base_handler (HISTORY_LINE_LIMIT = 180)",
        "options.max_messages",
        option(PrefixOptions, "max_messages"),
    ),
    PaperSetting(
        "conditions",
        ["no_p", "p"],
        "§4.1",
        "options.condition",
        option(PrefixOptions, "condition"),
    ),
    PaperSetting(
        "preference settings",
        31,
        "§3.2, App. A",
        "options.settings",
        lambda c: len(PrefixOptions.model_validate(c.options).settings),
    ),
    PaperSetting(
        "user simulator",
        "gpt-4.1, T = 0",
        "§4.3",
        "--model user=SPEC",
        model_of("user"),
        note="any served model; the embedded models are far smaller",
    ),
)
"""What the PrefIx paper and PrefIX's code fix, beside what a run does."""
