"""MultiSessionCollab: simulated users with preferences bring one problem per session."""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any, ClassVar, Literal, Self

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from rapport.llm import GenerateConfig, ModelRoles, stable_hash
from rapport.log import Condition, ExperimentConfig, SessionRecord, SessionSpec, Table, UserSpec

from .._protocol import Benchmark, paper_data
from ._agreement import agreement_table, guard_table, prompts_table, protocol_table
from ._loaders import is_msc_cache, load_local
from ._msc_profiles import load_msc_profiles
from ._msc_prompts import load_msc_prompts, packaged_prompts
from ._personas import Persona, PersonaFileError, load_personas_jsonl
from ._presets import SMALL_PRESET
from ._problems import is_correct
from ._profiles import PREFERENCES_PER_USER, CollabUser, as_collab_user, make_users
from ._session import CollabEpisode, Protocol, SessionSettings
from ._sources import load_problems
from ._taxonomy import load_taxonomy
from ._types import CollabOutcome, CollabTask, EnforcementEvent, PreferenceVerdictEvent, Problem


class CollabOptions(BaseModel):
    """The options of ``collab`` (``config.options``; unknown keys are rejected)."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    problems: str = Field(
        default="generated",
        json_schema_extra=paper_data(
            "MSC's cached test problems, --problems CHECKOUT/collaborativeagents/datasets/"
            "cache/<dataset>"
        ),
    )
    """Where problems come from: ``math500``, ``generated`` or a local file path."""
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
    split: Literal["eval", "train"] = "eval"
    """Which users: ``train`` users are drawn apart from ``eval`` users (disjoint by
    construction), for runs whose sessions train a learner."""
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


class CollabBenchmark(Benchmark):
    """Simulated users, each with a persona and three preferences, bring one problem per
    session to the agent; memory may carry what it learned between sessions.

    Per session it measures TS (the user's final draft answer is correct), UE (the user's
    enforcing messages), UE_pref (the preferences enforced) and Len (the number of
    messages, the agent's opening included).

    Args:
        problems: the run's problem pool (sessions draw from it).
        max_turns: the most agent replies per session.
        personas: personas to draw users from; None: generated from attribute lists.
        split: which users (see `CollabOptions`).
        profiles: loaded user profiles; None: users drawn from the taxonomy.
        preference_pool: draw users' preferences only from these ids; None: from all.
        protocol: how sessions are played (see `CollabOptions`).
        fixed_order: every user takes the pool's problems in order (MSC's cached test
            problems); False: each user draws its own.
    """

    name = "collab"
    options_model = CollabOptions
    metrics = ("TS", "UE", "UE_pref", "Len")
    lower_is_better = frozenset({"UE", "UE_pref", "Len"})
    presets = (SMALL_PRESET,)
    produces = (CollabOutcome,)
    roles = ("user", "judge")
    memory_defaults: ClassVar[dict[str, dict[str, Any]]] = {"reflection": {"form": "msc"}}
    """MSC's reflection: one free-text notes document, nothing capped."""

    def __init__(
        self,
        problems: list[Problem],
        *,
        max_turns: int = 10,
        personas: list[Persona] | None = None,
        split: Literal["eval", "train"] = "eval",
        profiles: list[CollabUser] | None = None,
        preference_pool: list[str] | None = None,
        protocol: Protocol | None = None,
        fixed_order: bool = False,
    ) -> None:
        self.pool = list(problems)
        self.max_turns = max_turns
        self.personas = personas
        self.protocol = protocol or Protocol()
        self.user_kind = self.protocol.user
        self.split = split
        self.profiles = profiles
        self.preference_pool = preference_pool
        self.fixed_order = fixed_order

    @classmethod
    def from_config(cls, config: ExperimentConfig) -> Self:
        """Build from a config: validate the options, load the problems and personas.

        MSC's cache (a cached test file, or a folder of them) is taken whole, in file
        order, and every user brings the same problems in that order, as MSC runs it.
        Any other source gives a pool of users x sessions problems drawn with the run's
        seed (or the whole source when it is smaller); `sessions` wraps around a smaller
        pool.

        Raises:
            pydantic.ValidationError: an unknown or badly typed option.
            ProblemSourceError: the problem source cannot be read or is too small.
            PersonaFileError: the persona file is missing or malformed.
            MscPromptsError: ``prompts_from`` holds no readable MSC prompts.
        """
        options = CollabOptions.model_validate(config.options)
        fixed = is_msc_cache(options.problems)
        if fixed:
            problems = load_local(options.problems)
        else:
            problems = load_problems(
                options.problems, config.users * config.sessions, config.seed, allow_fewer=True
            )
        personas = load_personas_jsonl(options.personas) if options.personas else None
        profiles = _profiles(options, config.users if "users" in config.model_fields_set else 0)
        return cls(
            problems,
            max_turns=config.max_turns,
            personas=personas,
            split=options.split,
            profiles=profiles,
            preference_pool=options.preferences,
            protocol=protocol_of(options),
            fixed_order=fixed,
        )

    def protocol_memory_options(self) -> dict[str, dict[str, Any]]:
        """MSC's reflection; with MSC's prompts, its notes prompts from the same checkout."""
        options = super().protocol_memory_options()
        checkout = self.protocol.prompts.checkout
        if checkout is not None:
            options["reflection"] = {**options.get("reflection", {}), "prompts_from": checkout}
        return options

    def default_users(self) -> int | None:
        """With profiles, all of them (MSC runs every profile); else the config's default."""
        return len(self.profiles) if self.profiles is not None else None

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

        With a fixed order (MSC's cache) every user takes the pool's first ``n`` problems in
        order. Otherwise the pool is shuffled by `seed`; user ``i`` takes the ``n`` problems
        after the first ``i * n``, wrapping around when the pool is smaller than users x
        sessions.
        """
        if not self.pool:
            return []
        if self.fixed_order:
            chosen = [self.pool[i % len(self.pool)] for i in range(n)]
            return [
                SessionSpec(id=p.id, user_id=user.id, index=i, task=CollabTask(problem=p))
                for i, p in enumerate(chosen)
            ]
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
            protocol=self.protocol,
        )

    def score(self, record: SessionRecord) -> dict[str, float]:
        """TS: 1 if the final draft is correct by the session's grader; UE: the user's
        enforcing messages (as MSC counts them); UE_pref: the preferences enforced (one
        message may enforce several); Len: the session's messages, the agent's opening and
        the user's last included (MSC's conversation length)."""
        enforcements = record.events_of(EnforcementEvent)
        outcome = record.outcome
        solved = isinstance(outcome, CollabOutcome) and _solved(outcome)
        return {
            "TS": float(solved),
            "UE": float(len({e.turn for e in enforcements})),
            "UE_pref": float(len(enforcements)),
            "Len": float(sum(1 for t in record.turns if t.speaker in ("user", "agent"))),
        }

    @classmethod
    def report_tables(cls, records: Sequence[SessionRecord]) -> list[Table]:
        """The datasets and the grader; the prompts read from a MultiSessionCollab checkout
        (when a session read any); how often enforcement agreed with the checkers, per
        condition (when any could); what code did for the user simulator (when a session
        used one)."""
        records = list(records)
        tables = [protocol_table(records), prompts_table(records), agreement_table(records)]
        if any(r.events_of(PreferenceVerdictEvent) for r in records):
            tables.append(guard_table(records))
        return [t for t in tables if t.rows]


def protocol_of(options: CollabOptions) -> Protocol:
    """How sessions are played, from the options (MSC's prompts read where they say so).

    Raises:
        MscPromptsError: ``prompts_from`` holds no readable MSC prompts.
    """
    prompts = load_msc_prompts(options.prompts_from) if options.prompts_from else None
    return Protocol(
        session=options.session,
        user=options.user,
        verdicts=options.verdicts or "checkers",
        grader=options.grader,
        enforcement=options.enforcement,
        length_rule=options.agent_length_rule,
        agent_config=GenerateConfig(
            temperature=options.agent_temperature,
            top_p=options.agent_top_p,
            max_tokens=options.agent_max_tokens,
        ),
        prompts=prompts or packaged_prompts(),
    )


def _solved(outcome: CollabOutcome) -> bool:
    if outcome.grader == "judge":
        return bool(outcome.judged)
    return bool(outcome.draft) and is_correct(outcome.problem, outcome.draft)


def _profiles(options: CollabOptions, asked: int) -> list[CollabUser] | None:
    """The profiles users come from (None: the taxonomy), checked against `asked` users."""
    if options.profiles is None:
        return None
    profiles = load_msc_profiles(options.profiles)
    if options.user == "rules":
        profiles = [u for u in profiles if _checkable(u)]
    if not profiles or len(profiles) < asked:
        usable = " with only checkable preferences" if options.user == "rules" else ""
        raise PersonaFileError(
            f"{options.profiles}: {len(profiles)} profiles{usable}, {max(asked, 1)} asked"
        )
    return profiles


def _checkable(user: CollabUser) -> bool:
    taxonomy = load_taxonomy("collab")
    return all(taxonomy.get(p).checker is not None for p in user.preferences)


def _user_index(user: UserSpec) -> int:
    """User ``i``'s position (ids are ``user-000`` ...; other ids hash to a stable slot)."""
    suffix = user.id.rsplit("-", 1)[-1]
    if suffix.isdigit():
        return int(suffix)
    return int(stable_hash("collab-user", user.id)[:6], 16)
