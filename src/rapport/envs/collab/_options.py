"""The options of ``collab`` (what its paper fixes: `_paper.COLLAB_PAPER`)."""

from __future__ import annotations

import random
from typing import Literal, Self

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from .._protocol import paper_data
from ._profiles import PREFERENCES_PER_USER
from ._taxonomy import load_taxonomy


class CollabOptions(BaseModel):
    """The options of ``collab`` (``config.options``; unknown keys are rejected)."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    problems: str = Field(
        default="generated",
        json_schema_extra=paper_data(
            "MSC's cached test problems, --problems CHECKOUT/collaborativeagents/datasets/cache"
        ),
    )
    """Where problems come from: ``math500``, ``generated`` or a local file or folder path.
    MSC's cache (its ``datasets/cache`` folder, one of its dataset folders, or one cached
    file) gives one pool per dataset, taken in file order (see ``datasets``)."""
    datasets: list[str] | None = None
    """With MSC's cache as ``problems``: the datasets to run (``math-500``, ``math-hard``,
    ``logiqa``, ``mmlu``, ``medqa``; comma-separated on the command line). Each is a block of
    users of its own (every profile once per dataset, its id prefixed with the dataset when
    there are several), each taking that dataset's problems in order, with a memory of its
    own: what MSC's one ``run.py`` per dataset does. None: every dataset the cache holds."""
    personas: str | None = None
    """A Persona Hub style JSONL file; None: personas generated from attribute lists."""
    profiles: str | None = Field(
        default=None,
        json_schema_extra=paper_data(
            "MSC's profiles, --profiles CHECKOUT/collaborativeagents/user_profiles/"
            "user_profiles.json"
        ),
    )
    """MultiSessionCollab's ``user_profiles.json``: users are its profiles, in file order
    (their preferences mapped onto our ids); None: users drawn from the taxonomy."""
    user: Literal["llm", "rules"] = "llm"
    """Who plays the user: ``llm`` (the ``user`` model) or ``rules`` (code alone; only
    checkable preferences; no user model calls)."""
    session: Literal["msc", "guarded"] = "msc"
    """How a session is played: ``msc`` (as MSC's code: the agent opens with a greeting,
    the user model reads the whole conversation, decides enforcement, keeps its own draft
    and may end at any turn, and never reads the reply that reaches the turn cap) or
    ``guarded`` (for small models: the user opens, reads its last four messages, code
    extracts the draft, guards role slips, and ends only with a draft)."""
    verdicts: Literal["model", "checkers"] | None = None
    """Who decides whether a reply broke a preference: ``model`` (the user model, as MSC;
    the checkers' verdicts are recorded beside it) or ``checkers`` (code where a checker
    decides). None: ``model`` for the LLM user under ``msc``, else ``checkers``."""
    grader: Literal["judge", "match"] = "judge"
    """What grades the final draft (TS): ``judge`` (the judge role against the reference
    solution, as MSC) or ``match`` (code: math-verify, or the option letter)."""
    enforcement: Literal["model", "natural", "template"] = "model"
    """How the ``guarded`` LLM user words an enforcement that code decided: ``model`` (its
    own words, checked not to paste the criterion), ``natural`` (code's everyday phrasing)
    or ``template`` (the preference's name and criterion verbatim: easier than the paper)."""
    agent_length_rule: bool = False
    """Ask the agent for short replies in its prompt (small models that run past their
    budget); MSC's agent prompt has no such rule."""
    agent_temperature: float = Field(default=1.0, ge=0.0, le=2.0)
    """The agent's sampling temperature (MSC: 1.0; seeded per call, so runs repeat)."""
    agent_top_p: float = Field(default=1.0, gt=0.0, le=1.0)
    """The agent's nucleus sampling (MSC sets none: 1.0, no nucleus cut)."""
    agent_max_tokens: int = Field(default=2048, ge=1)
    """The most tokens of one agent reply (MSC: 2048)."""
    prompts_from: str | None = Field(
        default=None, json_schema_extra=paper_data("MSC's own prompts, --prompts-from CHECKOUT")
    )
    """A MultiSessionCollab checkout: the ``msc`` session's agent, user and judge prompts
    and the task lines are MSC's own, read from its ``collaborativeagents/prompts.py`` and
    ``datasets/__init__.py`` at run time; None: our own wording (the default)."""
    agent_format: Literal["text", "json"] = "text"
    """How MSC's collaborator answers: ``text`` (its reply is the message: MSC's path for
    every agent model but Llama-3.3-70B-Instruct) or ``json`` (MSC's path for that model:
    its JSON prompts, one object whose ``response`` is the message, asked again until it
    parses, up to MSC's 10 attempts; the notes update answers JSON too). ``json`` takes
    ``prompts_from``: the JSON prompts are MSC's."""
    split: Literal["eval", "train"] = "eval"
    """Which users: ``train`` users are drawn apart from ``eval`` users (disjoint by
    construction), for runs whose sessions train a learner."""
    preferences: list[str] | None = None
    """Draw users' preferences only from these ids (a comma-separated string on the command
    line); None: the whole taxonomy, as the paper does. The pool must hold three categories
    with a compatible draw. A deviation from the paper, for models that cannot follow some
    preferences even when told them (see ``benchmarks/collab_followable.py``)."""

    @field_validator("preferences", "datasets", mode="before")
    @classmethod
    def _split_ids(cls, value: object) -> object:
        if isinstance(value, str):
            return [part.strip() for part in value.split(",") if part.strip()]
        return value

    @model_validator(mode="after")
    def _verdicts_fit(self) -> Self:
        if self.verdicts is None:
            llm_msc = self.user == "llm" and self.session == "msc"
            self.verdicts = "model" if llm_msc else "checkers"
        if self.user == "rules" and self.verdicts == "model":
            raise ValueError("the rule user has no model: it takes verdicts=checkers")
        return self

    @model_validator(mode="after")
    def _prompts_fit(self) -> Self:
        if self.prompts_from is not None and self.session != "msc":
            raise ValueError("prompts_from sets the msc session's prompts: it takes session=msc")
        if self.agent_format == "json" and self.prompts_from is None:
            raise ValueError("agent_format json is MSC's JSON path: it takes prompts_from")
        return self

    @model_validator(mode="after")
    def _known_pool(self) -> Self:
        if self.preferences is None:
            return self
        if self.profiles is not None:
            raise ValueError("preferences and profiles cannot be combined: profiles fix them")
        taxonomy = load_taxonomy("collab")
        unknown = sorted(set(self.preferences) - {p.id for p in taxonomy.preferences})
        if unknown:
            raise ValueError(f"unknown preference ids: {', '.join(unknown)}")
        try:
            taxonomy.sample_across_categories(
                random.Random(0),
                PREFERENCES_PER_USER,
                checkable_only=self.user == "rules",
                within=set(self.preferences),
            )
        except ValueError as error:
            raise ValueError(f"preferences {','.join(self.preferences)}: {error}") from None
        return self
