"""MultiSessionCollab: simulated users with preferences bring one problem per session."""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Literal, Self

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from rapport.llm import GenerateConfig, ModelRoles, stable_hash
from rapport.log import Condition, ExperimentConfig, SessionRecord, SessionSpec, Table, UserSpec

from .._protocol import Benchmark
from ._agreement import agreement_table, guard_table
from ._msc_profiles import load_msc_profiles
from ._personas import Persona, PersonaFileError, load_personas_jsonl
from ._problems import is_correct
from ._profiles import PREFERENCES_PER_USER, CollabUser, as_collab_user, make_users
from ._session import CollabEpisode, SessionSettings
from ._sources import load_problems
from ._taxonomy import load_taxonomy
from ._types import CollabOutcome, CollabTask, EnforcementEvent, PreferenceVerdictEvent, Problem


class CollabOptions(BaseModel):
    """The options of ``collab`` (``config.options``; unknown keys are rejected)."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    problems: str = "generated"
    """Where problems come from: ``math500``, ``generated`` or a local file path."""
    personas: str | None = None
    """A Persona Hub style JSONL file; None: personas generated from attribute lists."""
    profiles: str | None = None
    """MultiSessionCollab's ``user_profiles.json``: users are its profiles, in file order
    (their preferences mapped onto our ids); None: users drawn from the taxonomy."""
    user: Literal["llm", "rules"] = "llm"
    """Who plays the user: ``llm`` (the ``user`` model, under code rules) or ``rules`` (code
    alone; only checkable preferences; no user model calls)."""
    enforcement: Literal["model", "natural", "template"] = "model"
    """How the LLM user words an enforcement that code decided: ``model`` (its own words,
    checked not to paste the criterion), ``natural`` (code's everyday phrasing) or
    ``template`` (the preference's name and criterion verbatim: easier than the paper)."""
    split: Literal["eval", "train"] = "eval"
    """Which users: ``train`` users are drawn apart from ``eval`` users (disjoint by
    construction), for runs whose sessions train a learner."""
    agent_temperature: float = Field(default=0.7, ge=0.0, le=2.0)
    """The agent's sampling temperature (seeded per call, so runs still repeat exactly).
    Greedy decoding makes small agents repeat one reply word for word after an enforcement."""
    preferences: list[str] | None = None
    """Draw users' preferences only from these ids (a comma-separated string on the command
    line); None: the whole taxonomy, as the paper does. The pool must hold three categories
    with a compatible draw. A deviation from the paper, for models that cannot follow some
    preferences even when told them (see ``benchmarks/collab_followable.py``)."""

    @field_validator("preferences", mode="before")
    @classmethod
    def _split_ids(cls, value: object) -> object:
        if isinstance(value, str):
            return [part.strip() for part in value.split(",") if part.strip()]
        return value

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


class CollabBenchmark(Benchmark):
    """Simulated users, each with a persona and three preferences, bring one problem per
    session to the agent; memory may carry what it learned between sessions.

    Per session it measures TS (the user's final draft answer is correct), UE (the user's
    enforcing messages), UE_pref (the preferences enforced) and Len (the number of
    messages, user's and agent's).

    Args:
        problems: the run's problem pool (sessions draw from it).
        max_turns: the most user-agent turn pairs per session.
        personas: personas to draw users from; None: generated from attribute lists.
        agent_temperature: the agent's sampling temperature.
        user: who plays the user (see `CollabOptions`).
        split: which users (see `CollabOptions`).
        profiles: loaded user profiles; None: users drawn from the taxonomy.
        enforcement: how the LLM user words enforcements (see `CollabOptions`).
        preference_pool: draw users' preferences only from these ids; None: from all.
    """

    name = "collab"
    options_model = CollabOptions
    metrics = ("TS", "UE", "UE_pref", "Len")
    lower_is_better = frozenset({"UE", "UE_pref", "Len"})
    produces = (CollabOutcome,)
    roles = ("user",)

    def __init__(
        self,
        problems: list[Problem],
        *,
        max_turns: int = 10,
        personas: list[Persona] | None = None,
        agent_temperature: float = 0.7,
        user: Literal["llm", "rules"] = "llm",
        split: Literal["eval", "train"] = "eval",
        profiles: list[CollabUser] | None = None,
        enforcement: Literal["model", "natural", "template"] = "model",
        preference_pool: list[str] | None = None,
    ) -> None:
        self.pool = list(problems)
        self.max_turns = max_turns
        self.personas = personas
        self.agent_temperature = agent_temperature
        self.user_kind = user
        self.split = split
        self.profiles = profiles
        self.enforcement = enforcement
        self.preference_pool = preference_pool

    @classmethod
    def from_config(cls, config: ExperimentConfig) -> Self:
        """Build from a config: validate the options, load the problems and personas.

        The pool holds users x sessions problems drawn with the run's seed (or the whole
        source when it is smaller), so no problem repeats within a run when the source is
        large enough; `sessions` wraps around a smaller pool.

        Raises:
            pydantic.ValidationError: an unknown or badly typed option.
            ProblemSourceError: the problem source cannot be read or is too small.
            PersonaFileError: the persona file is missing or malformed.
        """
        options = CollabOptions.model_validate(config.options)
        problems = load_problems(
            options.problems, config.users * config.sessions, config.seed, allow_fewer=True
        )
        personas = load_personas_jsonl(options.personas) if options.personas else None
        profiles = load_msc_profiles(options.profiles) if options.profiles else None
        if profiles is not None and options.user == "rules":
            profiles = [u for u in profiles if _checkable(u)]
        if profiles is not None and len(profiles) < config.users:
            usable = " with only checkable preferences" if options.user == "rules" else ""
            raise PersonaFileError(
                f"{options.profiles}: {len(profiles)} profiles{usable}, {config.users} asked"
            )
        return cls(
            problems,
            max_turns=config.max_turns,
            personas=personas,
            agent_temperature=options.agent_temperature,
            user=options.user,
            split=options.split,
            profiles=profiles,
            enforcement=options.enforcement,
            preference_pool=options.preferences,
        )

    def users(self, n: int, seed: int) -> list[UserSpec]:
        """`n` reproducible users (persona + three non-conflicting preferences), or the
        first `n` loaded profiles."""
        if self.profiles is not None:
            return list(self.profiles[:n])
        return list(
            make_users(
                n,
                seed,
                self.personas,
                checkable_only=self.user_kind == "rules",
                split=self.split,
                within=self.preference_pool,
            )
        )

    def sessions(self, user: UserSpec, n: int, seed: int) -> list[SessionSpec]:
        """`n` sessions, one problem each, the same for every condition of the run.

        The pool is shuffled by `seed`; user ``i`` takes the ``n`` problems after the first
        ``i * n``, wrapping around when the pool is smaller than users x sessions.
        """
        if not self.pool:
            return []
        order = random.Random(f"collab-problems:{seed}").sample(self.pool, len(self.pool))
        start = _user_index(user) * n
        chosen = [order[(start + i) % len(order)] for i in range(n)]
        return [
            SessionSpec(id=p.id, user_id=user.id, index=i, task=CollabTask(problem=p))
            for i, p in enumerate(chosen)
        ]

    def truth(self, user: UserSpec, condition: Condition) -> str:
        """The user's preferences in words (none under a condition where it holds none)."""
        if not SessionSettings.model_validate(condition.settings).preferences:
            return ""
        return as_collab_user(user).truth()

    def episode(
        self, spec: SessionSpec, user: UserSpec, models: ModelRoles, condition: Condition
    ) -> CollabEpisode:
        """The session's episode. ``condition.settings`` may set ``mode`` (``multiturn`` |
        ``direct``) and ``preferences`` (whether the user holds any)."""
        return CollabEpisode(
            spec,
            as_collab_user(user),
            spec.task_as(CollabTask).problem,
            condition,
            models,
            max_turns=self.max_turns,
            benchmark=self.name,
            agent_config=GenerateConfig(temperature=self.agent_temperature, top_p=0.95),
            user_kind=self.user_kind,
            enforcement=self.enforcement,
        )

    def score(self, record: SessionRecord) -> dict[str, float]:
        """TS: 1 if the final draft answer is correct; UE: the user's enforcing messages
        (as MultiSessionCollab counts it); UE_pref: the preferences enforced (one message
        may enforce several); Len: messages.

        Len counts every message of the session, the user's (opening and last reaction
        included) and the agent's.
        """
        enforcements = record.events_of(EnforcementEvent)
        outcome = record.outcome
        solved = (
            isinstance(outcome, CollabOutcome)
            and bool(outcome.draft)
            and is_correct(outcome.problem, outcome.draft)
        )
        return {
            "TS": float(solved),
            "UE": float(len({e.turn for e in enforcements})),
            "UE_pref": float(len(enforcements)),
            "Len": float(sum(1 for t in record.turns if t.speaker in ("user", "agent"))),
        }

    @classmethod
    def report_tables(cls, records: Sequence[SessionRecord]) -> list[Table]:
        """How often enforcement agreed with the checkers, per condition (when any could),
        and what code did for the user simulator (when a session used one)."""
        records = list(records)
        tables = [agreement_table(records)]
        if any(r.events_of(PreferenceVerdictEvent) for r in records):
            tables.append(guard_table(records))
        return [t for t in tables if t.rows]


def _checkable(user: CollabUser) -> bool:
    taxonomy = load_taxonomy("collab")
    return all(taxonomy.get(p).checker is not None for p in user.preferences)


def _user_index(user: UserSpec) -> int:
    """User ``i``'s position (ids are ``user-000`` ...; other ids hash to a stable slot)."""
    suffix = user.id.rsplit("-", 1)[-1]
    if suffix.isdigit():
        return int(suffix)
    return int(stable_hash("collab-user", user.id)[:6], 16)
