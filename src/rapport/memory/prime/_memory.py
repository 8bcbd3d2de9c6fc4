"""PrimeMemory: explore in rounds, distil each round's episodes into a library its condition
shares, evolve the whole library once per round; retrieve at every turn."""

from __future__ import annotations

import asyncio
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import numpy as np
from pydantic import BaseModel, Field

from rapport.llm import Message, ModelError, ModelRoles
from rapport.log import MemoryItem, MemoryState, SessionRecord
from rapport.memory import (
    BaseMemory,
    Embedder,
    MemoryOptions,
    SessionInfo,
    UserRef,
    embedder_name,
    get_embedder,
)

from ._credit import Credit, TrajectoryReward, stage_of, trajectory_reward
from ._distill import Fields, distill, explorations
from ._evolve import EvolutionSettings, IterationResult, PruneBasis, evolution_rng, evolve_once
from ._library import ExperienceLibrary
from ._needs import HORIZON, RewardedEpisode
from ._select import select, zone_prompt
from ._situation import situation_text

PAPER_SIMILARITY = 0.6
"""The paper's threshold, set for a 1536-d OpenAI embedding."""
SIMILARITY = {"all-MiniLM-L6-v2": 0.75, "hashing": 0.6}
"""The threshold each embedder's scale of cosine similarity calls for: the one that best
separates alike situations from the rest on our gyms' situations
(``benchmarks/prime_threshold.py``: MiniLM passes 88% of candidate pairs at 0.6, alike
or not, and 60% at 0.75; hashing passes 53% at 0.6, near its best). Other embedders take
the paper's."""


class PrimeOptions(MemoryOptions):
    """PRIME's settings (memory options from the config)."""

    credit: Credit | dict[str, Credit] | None = None
    """Credit assignment over an episode's turns: ``R2G`` (reward-to-go, gamma 0.8) or
    ``Equalized`` (every turn the same weight: the key turns are the first ``key_turns``).
    None: the paper's per environment (App. D: R2G for turtle and function, Equalized for
    intention and travel; `PAPER_CREDIT` says what the others use and why); one method
    for every environment; or a mapping that overrides some environments'."""
    trajectory_reward: TrajectoryReward = "score"
    """The reward an episode counts for (its zone, a poor outcome): ``score`` the gym's
    score in [0, 1] (the paper's R(tau): its worked examples give 1.00, 1.00, 0.76, 0.83,
    0.25); ``outcome`` 1 for a solved episode, else the score; ``R2G`` its turn rewards
    discounted by gamma 0.8 from the first turn on (a late success lands in the warning
    zone)."""
    key_turns: int = Field(default=3, ge=1)
    reveal_hidden: bool = False
    """Show the distiller what a finished train episode kept hidden (the rule, the entity,
    the user's intent), not only the trajectory."""
    distill_fields: Fields = "lesson"
    """``lesson``: the distiller writes the lesson, and each experience's situation, action
    and outcome are taken from the log; ``all``: it writes every field."""
    refine: bool = True
    """Show the distiller a lesson that failed a check (too short, looping, naming the
    answer, a false "again" ...) and have it write it again; what still fails is dropped
    and listed in the library's history."""
    warning_actions: bool = False
    """Show the agent a warning's failed move, not only its situation and lesson (a small
    agent copies the move it is warned against)."""
    select_k: int = Field(default=3, ge=1)
    """Experiences the selection model may pick per turn."""
    max_candidates: int = Field(default=20, ge=1)
    min_similarity: float | Literal["measured", "paper"] | None = None
    """The similarity a stored situation needs to be offered: a number; ``measured`` (or
    None) the one measured for the embedder in use (`SIMILARITY`); ``paper`` the paper's
    0.6 (`PAPER_SIMILARITY`), set for another embedder's scale."""
    select_with_model: bool = True
    """False: take the top ``select_k`` candidates by similarity (no model call)."""
    selector: Literal["agent", "memory"] = "agent"
    """The model that selects among the candidates: ``agent``, the agent itself (§3.2:
    PRIME asks the agent to select them, as tools); ``memory``, the memory role (§4.1
    speaks of "the selection LLM")."""
    iterations: int | None = Field(default=None, ge=0)
    """At most this many evolution iterations (None: one per round; 0: distil only)."""
    prune_every: int = Field(default=2, ge=1)
    """Prune every this many iterations."""
    prune_basis: PruneBasis = "rounds"
    """``rounds``: prune an experience retrieved at fewer than 2 turns over the rounds since
    it was made; ``offers``: judge that only once it was offered (a turn of its environment
    and stage) at ``min_offers`` turns or more, and keep it until then."""
    min_offers: int = Field(default=4, ge=1)
    """Offered turns an experience needs before ``prune_basis: offers`` judges its
    retrievals."""
    embedder: str = "auto"
    library_path: str | None = None
    """Start from a library JSON file (e.g. one built with another model)."""
    seed: int | None = None
    """The evolution RNG's seed (None: derived from the run seed)."""


class PendingEpisode(BaseModel):
    """A train episode learned from and not yet distilled (its round is not over)."""

    round: int | None
    record: SessionRecord
    retrieved: dict[str, int] = Field(default_factory=dict)
    """Experience id -> the turns it was retrieved at in this episode."""
    offered: dict[str, int] = Field(default_factory=dict)
    """Experience id -> the turns it was offered at (its environment and stage)."""


@dataclass
class _Episode:
    env: str = ""
    horizon: int = 16
    split: str = "train"
    round: int | None = None
    round_episodes: int = 0
    retrieved: Counter[str] = field(default_factory=Counter)
    offered: Counter[str] = field(default_factory=Counter)


class PrimeMemory(BaseMemory):
    """PRIME: the library belongs to the condition (every user shares it) and travels in
    snapshots.

    Train episodes come in rounds (`SessionInfo`'s ``round``, ``rounds`` and
    ``round_episodes``; an episode without them is a round of its own). A round's
    episodes wait in the memory until the last of them is learned: then they are
    distilled (one experience each) and the whole library evolves once, as one update,
    one new version, under a lock. An episode of a later round, or an eval episode, first
    completes any round left open (an episode of it failed and was never learned).

    Args:
        models: the ``memory`` role distils, evolves and selects.
        encoder: an `Embedder` object (default: ``get_embedder(options.embedder)``, where the
            ``embedder`` option names one: ``auto``, ``minilm``, ``hashing``).
        **options: `PrimeOptions` fields.
    """

    name = "prime"
    requires = (RewardedEpisode,)
    Options = PrimeOptions
    options: PrimeOptions

    def __init__(
        self, models: ModelRoles, *, encoder: Embedder | None = None, **options: Any
    ) -> None:
        super().__init__(models, **options)
        self.settings = self.options
        self._embedder = encoder
        self._given = encoder is not None
        self.library = (
            ExperienceLibrary.load(self.settings.library_path)
            if self.settings.library_path
            else ExperienceLibrary()
        )
        self.pending: dict[str, PendingEpisode] = {}
        self.rounds = 5
        """Rounds of the run (from the sessions' attributes): the anneal's length."""
        self._episodes: dict[str, _Episode] = {}
        self._lock = asyncio.Lock()

    @property
    def embedder(self) -> Embedder:
        """The embedder (built on first use)."""
        if self._embedder is None:
            self._embedder = get_embedder(self.settings.embedder)
        return self._embedder

    @property
    def min_similarity(self) -> float:
        """The threshold retrieval applies (the option, else the one for the embedder)."""
        chosen = self.settings.min_similarity
        if chosen == "paper":
            return PAPER_SIMILARITY
        if isinstance(chosen, float | int):
            return float(chosen)
        return SIMILARITY.get(self.embedder.name, PAPER_SIMILARITY)

    def retrieval(self) -> str:
        """Which embedder compares situations, and the threshold: ``hashing (fallback: ...)``
        when ``auto`` found no MiniLM."""
        name = self.embedder.name
        backend = self.embedder.backend
        label = f"{name} ({backend})" if backend else name
        if name == "hashing" and self.settings.embedder == "auto" and not self._given:
            label += " (fallback: the MiniLM embedder is not installed)"
        return f"{label}, similarity >= {self.min_similarity:g}"

    @property
    def evolution(self) -> EvolutionSettings:
        """The schedule: the anneal over the run's rounds, pruning every ``prune_every``."""
        cap = self.settings.iterations
        return EvolutionSettings(
            iterations=self.rounds if cap is None else min(cap, self.rounds),
            prune_every=self.settings.prune_every,
            prune_basis=self.settings.prune_basis,
            min_offers=self.settings.min_offers,
            keep_log_fields=self.settings.distill_fields == "lesson",
        )

    def describe(self) -> str:
        if self._embedder is not None and self._given:
            return self._embedder.name
        return embedder_name(self.settings.embedder)

    def encode(self, texts: list[str]) -> np.ndarray:
        """Unit vectors for texts."""
        return np.asarray(self.embedder.encode(texts), dtype=np.float32)

    async def context(self, user: UserRef, session: SessionInfo) -> str:
        split, round_ = session.split, session.round
        if session.rounds is not None:
            self.rounds = session.rounds
        self._episodes[user.id] = _Episode(
            env=session.task,
            horizon=session.horizon or HORIZON,
            split=split,
            round=round_,
            round_episodes=session.round_episodes,
        )
        if round_ is not None:
            async with self._lock:
                while self.library.rounds < int(round_):
                    await self._consolidate(self.library.rounds)
                if split == "eval" and self.pending:
                    await self._consolidate(None)
        return ""

    async def recall(self, user: UserRef, conversation: list[Message]) -> str:
        episode = self._episodes.get(user.id)
        if episode is None or not self.library.active():
            return ""
        turn = sum(m.role == "assistant" for m in conversation)
        stage = stage_of(turn, episode.horizon)
        situation = situation_text(conversation, episode.env, stage)
        query = self.encode([situation])[0]
        if episode.split == "train":
            offered = self.library.offered(episode.env, stage, self.encode)
            episode.offered.update(e.id for e in offered)
        found = self.library.candidates(
            episode.env,
            stage,
            query,
            self.encode,
            min_similarity=self.min_similarity,
            limit=self.settings.max_candidates,
        )
        candidates = [e for e, _ in found]
        if not candidates:
            return ""
        if self.settings.select_with_model:
            chosen, _how = await select(
                self.models.get(self.settings.selector),
                candidates,
                k=self.settings.select_k,
                env=episode.env,
                turn=turn,
                horizon=episode.horizon,
                stage=stage,
                conversation=conversation,
            )
        else:
            chosen = candidates[: self.settings.select_k]
        if episode.split == "train":
            episode.retrieved.update(e.id for e in chosen)
        return zone_prompt(chosen, warning_actions=self.settings.warning_actions)

    async def learn(self, user: UserRef, record: SessionRecord) -> None:
        """Keep a train episode for its round's distillation; when it is the round's last,
        distil the round and evolve the library (eval episodes leave it as it is)."""
        if record.split != "train":
            return
        episode = self._episodes.pop(user.id, _Episode())
        key = f"{record.condition}/{record.user_id}/{record.spec_id}"
        async with self._lock:
            self.pending[key] = PendingEpisode(
                round=episode.round,
                record=record,
                retrieved=dict(episode.retrieved),
                offered=dict(episode.offered),
            )
            if episode.round is None:
                await self._consolidate(self.library.rounds)
                return
            waiting = sum(p.round == episode.round for p in self.pending.values())
            if (
                episode.round_episodes
                and waiting >= episode.round_episodes
                and self.library.rounds <= episode.round
            ):
                while self.library.rounds <= episode.round:
                    await self._consolidate(self.library.rounds)

    async def _consolidate(self, round_: int | None) -> None:
        """One update of the library: the track records of the waiting episodes, their
        distillation and (for a round) one evolution iteration, committed as one version.

        ``round_``: the round (from 0) that ends; None distils the episodes that arrived
        after their round ended (an episode run again on resume), without evolution.
        """
        lib = self.library
        due = sorted(
            (key, p)
            for key, p in self.pending.items()
            if round_ is None or p.round is None or p.round <= round_
        )
        iteration = lib.iteration + 1 if round_ is not None else lib.iteration
        self._track(due, iteration)
        added, merged, dropped, refined = [], [], [], 0
        for key, pending in due:
            try:
                made = await distill(
                    self.models.get("memory"),
                    pending.record,
                    library_id=lib.new_id(),
                    iteration=iteration,
                    credit=self.settings.credit,
                    k=self.settings.key_turns,
                    reveal_hidden=self.settings.reveal_hidden,
                    fields=self.settings.distill_fields,
                    refine=self.settings.refine,
                    reward_of=self.settings.trajectory_reward,
                )
            except ModelError as exc:
                dropped.append(f"{key}: not distilled ({type(exc).__name__}: {exc})")
                continue
            refined += made.refined
            dropped += made.dropped
            for e in made.experiences:
                twin = lib.same_as(e)
                if twin is None:
                    lib.add(e)
                    added.append(e.id)
                else:
                    twin.provenance += e.provenance
                    twin.record(iteration, "merged", f"{key} taught the same lesson")
                    merged.append(twin.id)
            self.pending.pop(key)
        note = f"distilled {len(due)} episode{'s' if len(due) != 1 else ''}"
        if refined:
            note += f" ({refined} lesson{'s' if refined > 1 else ''} rewritten)"
        result = IterationResult()
        if round_ is not None:
            note = f"round {round_ + 1}: {note}"
            settings = self.evolution
            if lib.iteration < settings.iterations:
                seed = self.models.seed if self.settings.seed is None else self.settings.seed
                rng = evolution_rng(seed, lib.iteration + 1)
                result = await evolve_once(lib, self.models.get("memory"), rng, settings)
                note += (
                    f"; evolution iteration {lib.iteration} (T={result.temperature:.2f}): "
                    + result.summary()
                )
            lib.rounds = round_ + 1
        else:
            note += " that came after their round"
        lib.model = lib.model or self.models.spec("agent")
        lib.embedder = self.retrieval()
        lib.commit(
            added=added + result.added,
            removed=list(result.removed),
            merged=merged,
            dropped=dropped + result.dropped + result.failed,
            touched=result.touched,
            note=note,
        )

    def _track(self, due: list[tuple[str, PendingEpisode]], iteration: int) -> None:
        """Count the episodes' retrievals into the track records of what they retrieved,
        and their offers into those of what they offered."""
        turns: Counter[str] = Counter()
        episodes: Counter[str] = Counter()
        solved: Counter[str] = Counter()
        for _, pending in due:
            outcome = pending.record.outcome
            if not isinstance(outcome, RewardedEpisode):
                continue
            summary = outcome.episode_summary()
            rewards = [s.reward for s in explorations(pending.record)]
            reward = trajectory_reward(
                rewards, summary.score, self.settings.trajectory_reward, success=summary.success
            )
            for exp_id, n in pending.offered.items():
                if exp_id in self.library.experiences:
                    self.library.experiences[exp_id].offers += n
            for exp_id, n in pending.retrieved.items():
                e = self.library.experiences.get(exp_id)
                if e is None:
                    continue
                e.retrievals += n
                e.uses += 1
                e.successes += summary.success
                e.last_retrieved = iteration
                if summary.success and summary.env not in e.success_envs:
                    e.success_envs.append(summary.env)
                e.poor_uses += reward <= 0.3
                turns[exp_id] += n
                episodes[exp_id] += 1
                solved[exp_id] += summary.success
        for exp_id in sorted(turns):
            n, m = turns[exp_id], episodes[exp_id]
            self.library.experiences[exp_id].record(
                iteration,
                "retrieved",
                f"{n} turn{'s' if n != 1 else ''} of {m} episode{'s' if m != 1 else ''}, "
                f"{solved[exp_id]} solved",
            )

    def snapshot(self, user: UserRef) -> MemoryState:
        """The shared library (its active experiences as items, the whole of it and the
        episodes waiting for their round's end in ``data``)."""
        items = [
            MemoryItem(
                id=e.id,
                text=e.line(),
                provenance=e.provenance,
                attributes={
                    "zone": e.zone,
                    "stage": e.stage,
                    "envs": e.conditions.envs,
                    "offers": e.offers,
                    "retrievals": e.retrievals,
                    "uses": e.uses,
                    "success_rate": e.success_rate,
                    "origin": e.origin,
                },
            )
            for e in self.library.active()
        ]
        data: dict[str, Any] = {"library": self.library.model_dump(mode="json")}
        if self.pending:
            data["pending"] = {k: p.model_dump(mode="json") for k, p in self.pending.items()}
        return MemoryState(items=items, data=data)

    def restore(self, user: UserRef, state: MemoryState) -> None:
        """Load the library from a snapshot unless the one held is newer; at the same
        version, add the snapshot's waiting episodes to those held."""
        data = state.data.get("library")
        if not data:
            return
        version = int(data.get("version", 0))
        pending = {
            k: PendingEpisode.model_validate(v) for k, v in state.data.get("pending", {}).items()
        }
        if version > self.library.version:
            self.library = ExperienceLibrary.model_validate(data)
            self.pending = pending
        elif version == self.library.version:
            for key, episode in pending.items():
                self.pending.setdefault(key, episode)

    def save(self, path: str | Path) -> None:
        """Write the library as JSON (load it into another run with ``library_path``)."""
        Path(path).write_text(self.library.to_json(), "utf-8")


def library_from_state(state: MemoryState) -> ExperienceLibrary:
    """The library a stored PRIME memory version holds."""
    data = state.data.get("library")
    return ExperienceLibrary.model_validate(data) if data else ExperienceLibrary()
