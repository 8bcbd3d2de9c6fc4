"""MultiSessionCollab: simulated users with preferences bring one problem per session."""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any, ClassVar, Literal, Self

from rapport.llm import GenerateConfig, ModelRoles, stable_hash
from rapport.log import Condition, ExperimentConfig, SessionRecord, SessionSpec, Table, UserSpec

from .._protocol import Benchmark
from ._agreement import agreement_table, guard_table, prompts_table, protocol_table
from ._loaders import is_msc_cache, msc_pools
from ._msc_profiles import load_msc_profiles
from ._msc_prompts import load_msc_prompts, packaged_prompts
from ._options import CollabOptions
from ._paper import COLLAB_PAPER, table_order
from ._personas import Persona, PersonaFileError, load_personas_jsonl
from ._presets import SMALL_PRESET
from ._problems import ProblemSourceError, is_correct
from ._profiles import CollabUser, as_collab_user, make_users
from ._session import CollabEpisode, Protocol, SessionSettings
from ._sources import load_problems
from ._taxonomy import load_taxonomy
from ._types import CollabOutcome, CollabTask, EnforcementEvent, PreferenceVerdictEvent, Problem


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
        pools: MSC's cached problems, one pool per dataset (its names), each taken in
            order by every user; with several, each dataset has users of its own. None:
            each user draws its own problems from `problems`.
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
    paper_protocol = COLLAB_PAPER
    role_defaults: ClassVar[dict[str, str]] = {"memory": "agent"}
    """MSC's agent reflects and picks its own notes (its collaborator's model)."""

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
        pools: dict[str, list[Problem]] | None = None,
    ) -> None:
        self.pool = list(problems)
        self.max_turns = max_turns
        self.personas = personas
        self.protocol = protocol or Protocol()
        self.user_kind = self.protocol.user
        self.split = split
        self.profiles = profiles
        self.preference_pool = preference_pool
        self.pools = {name: list(pool) for name, pool in pools.items()} if pools else None

    @classmethod
    def from_config(cls, config: ExperimentConfig) -> Self:
        """Build from a config: validate the options, load the problems and personas.

        MSC's cache gives one pool per dataset (``datasets`` picks which), taken in file
        order: every user of a dataset brings the same problems in that order, as MSC runs
        it. Any other source gives a pool of users x sessions problems drawn with the run's
        seed (or the whole source when it is smaller); `sessions` wraps around a smaller
        pool.

        Raises:
            pydantic.ValidationError: an unknown or badly typed option.
            ProblemSourceError: the problem source cannot be read or is too small, or
                ``datasets`` names one the cache does not hold.
            PersonaFileError: the persona file is missing or malformed.
            MscPromptsError: ``prompts_from`` holds no readable MSC prompts.
        """
        options = CollabOptions.model_validate(config.options)
        pools = _pools(options)
        problems = []
        if pools is None:
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
            pools=pools,
        )

    def protocol_memory_options(self) -> dict[str, dict[str, Any]]:
        """MSC's reflection; with MSC's prompts, its notes prompts from the same checkout
        (on its JSON path, the notes update's JSON reply)."""
        options = super().protocol_memory_options()
        prompts = self.protocol.prompts
        if prompts.checkout is not None:
            read = {"prompts_from": prompts.checkout}
            if prompts.agent_format == "json":
                read["notes_format"] = "json"
            options["reflection"] = {**options.get("reflection", {}), **read}
        return options

    def default_users(self) -> int | None:
        """With profiles, all of them (MSC runs every profile); else the config's default."""
        return len(self.profiles) if self.profiles is not None else None

    def users(self, n: int, seed: int) -> list[UserSpec]:
        """`n` reproducible users (persona + three non-conflicting preferences), or the
        first `n` loaded profiles; with several of MSC's datasets, those `n` once per
        dataset (``math-500-msc-000`` ...)."""
        if self.profiles is not None:
            users = list(self.profiles[:n])
        else:
            users = make_users(
                n,
                seed,
                self.personas,
                checkable_only=self.user_kind == "rules",
                split=self.split,
                within=self.preference_pool,
            )
        if self.pools is None:
            return list(users)
        if len(self.pools) == 1:
            return [u.model_copy(update={"dataset": next(iter(self.pools))}) for u in users]
        return [
            u.model_copy(update={"id": f"{dataset}-{u.id}", "dataset": dataset})
            for dataset in self.pools
            for u in users
        ]

    def sessions(self, user: UserSpec, n: int, seed: int) -> list[SessionSpec]:
        """`n` sessions, one problem each, the same for every condition of the run.

        With MSC's cache every user takes its dataset's first ``n`` problems in order
        (wrapping around a smaller pool). Otherwise the pool is shuffled by `seed`; user
        ``i`` takes the ``n`` problems after the first ``i * n``, wrapping around when the
        pool is smaller than users x sessions.
        """
        if self.pools is not None:
            pool = self.pools.get(as_collab_user(user).dataset, [])
            chosen = [pool[i % len(pool)] for i in range(n)] if pool else []
            return [
                SessionSpec(id=p.id, user_id=user.id, index=i, task=CollabTask(problem=p))
                for i, p in enumerate(chosen)
            ]
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
        """The user's preferences in words (none under a condition where it holds none).
        Under MSC's session, what the user itself receives: its profile's wording, listed
        as MSC's run.py lists it for the user (Table 3's S4: "the same as what is provided
        to the user simulator"); under the guarded session, each preference's criterion."""
        if not SessionSettings.model_validate(condition.settings).preferences:
            return ""
        collab_user = as_collab_user(user)
        if self.protocol.session != "msc":
            return collab_user.truth()
        words = collab_user.preference_wording()
        return "\n".join(f"{n}. {text}" for n, text in enumerate(words, start=1))

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
    checkout, agent_format = options.prompts_from, options.agent_format
    prompts = load_msc_prompts(checkout, agent_format) if checkout else None
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


def _pools(options: CollabOptions) -> dict[str, list[Problem]] | None:
    """MSC's cache as one pool per dataset (those ``datasets`` names, in its order), or None
    for any other source.

    Raises:
        ProblemSourceError: ``datasets`` without MSC's cache, or naming a dataset it lacks.
    """
    if not is_msc_cache(options.problems):
        if options.datasets is not None:
            raise ProblemSourceError(
                f"datasets picks from MSC's cache; {options.problems} is not (give "
                "--problems CHECKOUT/collaborativeagents/datasets/cache)"
            )
        return None
    pools = msc_pools(options.problems, "train" if options.split == "train" else "test")
    if options.datasets is None:
        return {d: pools[d] for d in sorted(pools, key=table_order)}
    missing = [d for d in options.datasets if d not in pools]
    if missing:
        raise ProblemSourceError(
            f"{options.problems}: no dataset {', '.join(missing)} (it holds {', '.join(pools)})"
        )
    return {d: pools[d] for d in dict.fromkeys(options.datasets)}


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
