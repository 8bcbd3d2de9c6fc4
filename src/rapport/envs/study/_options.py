"""The study benchmark's options, the memory its protocol sets, and what the paper and the
authors' app fix (`PAPER_PROTOCOL`, printed by ``rapport protocol study``).

Sources: MultiSessionCollab's Section 7 and Appendix F (Table 5, Figure 10), and the app the
study ran on (``Shuhaibm/collaborative-agents-human-study``: ``full_human_study.py``,
``collaborator_agent.py``), which fixes what the paper leaves open.
"""

from __future__ import annotations

import functools
from importlib import resources
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, Field

from rapport.llm import DEFAULT_SPEC
from rapport.log import ExperimentConfig, role_sampling

from .._paper import PaperSetting, memory_option, model_of
from ._design import SESSIONS, Assignment, StudyDesign
from ._survey import FREE_TEXT, ITEM_IDS, SurveyAnswers

APP = "full_human_study.py"
INITIAL_NOTES = "No notes yet: nothing is known about how this person likes to work."
"""What reflection's first notes update starts from (ours; the app's own with
``problems_from``)."""
MEMORY_DEFAULTS: dict[str, dict[str, Any]] = {
    "reflection": {"form": "msc", "select": False, "initial_notes": INITIAL_NOTES},
}
"""The memory as the app ran it: MSC's one notes document, all of it in the agent's system
prompt, rewritten after each session; no per-turn pick of notes (its agent is built
without scaffolding)."""


class StudyOptions(BaseModel):
    """The study benchmark's options: its design and the participants' assignments."""

    model_config = ConfigDict(extra="forbid")

    design: StudyDesign
    assignments: list[Assignment] = Field(min_length=1)


@functools.cache
def default_design() -> StudyDesign:
    """The shipped design (``design.yaml``: the paper's two study types, both conditions;
    ``docs/study-design.yaml`` is the same file)."""
    text = (resources.files("rapport.envs.study") / "design.yaml").read_text(encoding="utf-8")
    return StudyDesign.model_validate(yaml.safe_load(text))


def design_of(config: ExperimentConfig) -> StudyDesign:
    """A study config's design (the shipped one when the config holds none)."""
    if "design" not in config.options:
        return default_design()
    return StudyDesign.model_validate(config.options["design"])


def _types(config: ExperimentConfig) -> list[str]:
    return [t.app_study or t.id for t in design_of(config).study_types]


def _wording(config: ExperimentConfig) -> str:
    design = design_of(config)
    app = design.problems_from and all(t.app_study for t in design.study_types)
    return "the app's" if app else "rapport's own"


def _survey(_config: ExperimentConfig) -> list[str]:
    return [*ITEM_IDS[:2], "impact", *ITEM_IDS[2:], *(t.id for t in FREE_TEXT)]


SURVEY_ANSWERED = ["adherence", "memory", "impact", "confidence", "satisfaction"]
SURVEY_ANSWERED += ["feedback", "own_preferences"]
"""The survey's questions in the app's order: four anchored 1-5 ratings and the impact
choice, then both free-text questions."""


def _llama_70b(_paper: Any, value: Any) -> bool:
    return isinstance(value, str) and "llama-3.3-70b" in value.lower()


def _initial_notes(config: ExperimentConfig) -> str:
    design = design_of(config)
    notes = memory_option("reflection", "initial_notes", "")(config)
    if design.problems_from and "initial_notes" not in design.memory_options.get("reflection", {}):
        return "the app's"
    return "rapport's own" if notes == INITIAL_NOTES else "the design's"


def _agent_sampling(name: str) -> Any:
    return lambda config: role_sampling(config.sampling, "agent").get(name)


PAPER_PROTOCOL: tuple[PaperSetting, ...] = (
    PaperSetting(
        "study types", ["coding", "mixed"], f"App. F; {APP}", "design: study_types", _types
    ),
    PaperSetting(
        "conditions",
        ["none", "reflection"],
        "§7, App. F",
        "design: conditions",
        lambda c: design_of(c).conditions,
    ),
    PaperSetting("sessions per block", 3, "§7", "fixed", lambda c: SESSIONS),
    PaperSetting(
        "study types per participant",
        "all",
        "App. F (four studies each)",
        "design: blocks",
        lambda c: design_of(c).blocks,
    ),
    PaperSetting(
        "block order",
        "the participant's choice",
        APP,
        "fixed",
        lambda c: "counterbalanced",
        note="rapport fixes and counterbalances each participant's order of types and "
        "conditions, so neither is confounded with position",
    ),
    PaperSetting(
        "agent sees the problem",
        False,
        APP,
        "fixed",
        lambda c: False,
    ),
    PaperSetting(
        "problems and preference wordings",
        "the app's",
        APP,
        "--problems-from / design: problems_from",
        _wording,
        note="the app's are read from a checkout of it at create; offline, rapport's own "
        "problems of the same kinds and preferences of the same meaning",
    ),
    PaperSetting(
        "memory",
        "msc",
        "collaborator_agent.py",
        "design: memory_options.reflection.form",
        memory_option("reflection", "form"),
    ),
    PaperSetting(
        "per-turn pick of notes",
        False,
        f"{APP} (agent without scaffolding)",
        "design: memory_options.reflection.select",
        memory_option("reflection", "select", True),
    ),
    PaperSetting(
        "initial notes",
        "the app's",
        APP,
        "--problems-from / design: memory_options.reflection.initial_notes",
        _initial_notes,
        note="the app's line is read from its checkout; offline, rapport's own to the same effect",
    ),
    PaperSetting(
        "survey",
        SURVEY_ANSWERED,
        f"App. F, Table 5; {APP}",
        "fixed",
        _survey,
    ),
    PaperSetting(
        "memory answer in a block's first session",
        1,
        APP,
        "fixed",
        lambda c: SurveyAnswers.fixed_in_first_session()["memory"],
    ),
    PaperSetting(
        "closing questionnaire",
        None,
        "App. F",
        "fixed",
        lambda c: "after the last session",
        note="rapport's own addition: which assistant the participant would keep, and "
        "whether it learned how they like to work",
    ),
    PaperSetting(
        "participants",
        19,
        "App. F",
        "--participants",
        lambda c: c.users if "design" in c.options else None,
        note="as many as a study recruits (create --participants N)",
    ),
    PaperSetting(
        "agent model",
        "Llama-3.3-70B-Instruct",
        APP,
        "create --model agent=SPEC",
        lambda c: model_of("agent")(c) or DEFAULT_SPEC,
        note="serve it with vLLM or another OpenAI-compatible server (docs/serving.md)",
        matches=_llama_70b,
    ),
    PaperSetting(
        "agent temperature",
        0.7,
        "collaborator_agent.py",
        "create --model agent=SPEC,temperature=0.7",
        _agent_sampling("temperature"),
    ),
    PaperSetting(
        "agent max tokens",
        2048,
        "collaborator_agent.py",
        "create --model agent=SPEC,max_tokens=2048",
        _agent_sampling("max_tokens"),
    ),
)
