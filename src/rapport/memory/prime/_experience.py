"""An experience: one distilled, human-readable lesson with its conditions and track record."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from rapport.log import Provenance

from ._credit import Stage, Zone

ANY_ENV = "*"
RESULT = {
    "golden": "the episode succeeded",
    "warning": "the episode failed",
    "preference": "the episode partly succeeded",
}
"""How a prompt line says what came of the episode an experience was learned in."""


EventKind = Literal["created", "merged", "retrieved", "mutated", "generalized", "crossed", "pruned"]


class ExperienceEvent(BaseModel):
    """One thing that happened to an experience, at an evolution iteration (cycle) of the
    library: ``created`` (distilled, or made by an operator), ``merged`` (another episode's
    lesson said the same), ``retrieved`` (its track record over a round), ``mutated``,
    ``generalized``, ``crossed`` (an operator replaced it with ``related``) and ``pruned``."""

    iteration: int
    kind: EventKind
    note: str = ""
    related: list[str] = Field(default_factory=list)
    """The other experiences involved (a child, a crossover partner, parents)."""

    def line(self) -> str:
        """``iteration 2: mutated -> exp-9 (...)``."""
        linked = f" -> {', '.join(self.related)}" if self.related and self.kind != "created" else ""
        return f"iteration {self.iteration}: {self.kind}{linked}" + (
            f" ({self.note})" if self.note else ""
        )


class Conditions(BaseModel):
    """When an experience applies."""

    envs: list[str] = Field(default_factory=list)
    """Environments it was learned in (``*``: any, after generalization)."""
    turn_range: tuple[int, int] = (0, 0)
    """Turns (0-based) of the trajectory it was distilled from."""
    preconditions: list[str] = Field(default_factory=list)
    """What must hold for it to apply, in words."""


class Experience(BaseModel):
    """One entry of the PRIME library."""

    id: str
    situation: str
    action: str
    outcome: str
    lesson: str
    stage: Stage
    zone: Zone
    conditions: Conditions = Field(default_factory=Conditions)
    state: str = ""
    """The code-written situation at the key turn, in the form a live query takes
    (``rapport.memory.prime.compact_situation``); empty for experiences made before it."""
    offers: int = 0
    """Turns of train episodes it was offered at: turns of its environment and stage, where
    retrieval compared it with the situation (whether or not it cleared the threshold)."""
    retrievals: int = 0
    """Turns of train episodes it was retrieved at (one per turn it entered the prompt)."""
    uses: int = 0
    """Train episodes it was retrieved in."""
    successes: int = 0
    """Of those, episodes the gym counts as solved."""
    poor_uses: int = 0
    """Of those, episodes with a poor outcome (reward <= 0.3): candidates for mutation."""
    success_envs: list[str] = Field(default_factory=list)
    """The environments of the successful episodes that retrieved it (generalization
    needs more than one: Fig. 5, "succeeds across multiple environments")."""
    last_retrieved: int | None = None
    """The iteration whose round's episodes last retrieved it (None: never)."""
    created_iteration: int = 0
    """The iteration (cycle) it was made in: distilled from that round's episodes, or
    made by that iteration's evolution."""
    origin: str = "distilled"
    """``distilled``, ``mutation``, ``generalization`` or ``crossover``."""
    parents: list[str] = Field(default_factory=list)
    superseded_by: str | None = None
    pruned: str | None = None
    """Why pruning took it out of the library (None: not pruned)."""
    provenance: list[Provenance] = Field(default_factory=list)
    events: list[ExperienceEvent] = Field(default_factory=list)
    """What happened to it, in order."""

    @property
    def success_rate(self) -> float:
        """Share of successful uses (0 when never used)."""
        return self.successes / self.uses if self.uses else 0.0

    @property
    def episodes(self) -> int:
        """The distinct episodes it was learned in (more than one once a repeat merged in)."""
        return len({p.source for p in self.provenance}) or 1

    @property
    def active(self) -> bool:
        """Neither replaced by a newer experience nor pruned."""
        return self.superseded_by is None and self.pruned is None

    def record(self, iteration: int, kind: EventKind, note: str = "", *related: str) -> None:
        """Add an event to its history."""
        self.events.append(
            ExperienceEvent(iteration=iteration, kind=kind, note=note, related=list(related))
        )

    def applies_to(self, env: str) -> bool:
        """Whether the experience's environments include ``env``."""
        return ANY_ENV in self.conditions.envs or env in self.conditions.envs

    def embedding_text(self) -> str:
        """The text retrieval compares against the current situation.

        The code-written ``state`` when there is one (the same form as the query); else
        the situation and conditions in that form. The lesson is never embedded: it says
        what to do, not when.
        """
        if self.state:
            return self.state
        c = self.conditions
        envs = ", ".join(e for e in c.envs if e != ANY_ENV) or "any task"
        pre = " ".join(p.rstrip(".") + "." for p in c.preconditions)
        return f"{envs}, {self.stage} stage. Known so far: {self.situation.rstrip('.')}. {pre}"

    def line(self, *, action: bool = True) -> str:
        """One prompt line: when, what was done and how the episode ended, the lesson.

        ``action=False`` leaves out what was done ("When ... (the episode failed from
        here): ..."): a small agent shown a failed move tends to make it again, word for word.
        """
        when = self.situation.rstrip(".")
        if when[:2].istitle():  # "The agent ..." -> "the agent ...", but not "TV ..."
            when = when[0].lower() + when[1:]
        if not action:
            return f"When {when} ({RESULT[self.zone]} from here): {self.lesson}"
        return f"When {when}: {self.action.rstrip('.')} ({RESULT[self.zone]}). {self.lesson}"

    def learned(self) -> str:
        """``learned in 1 episode`` / ``learned in 3 episodes``."""
        return f"learned in {self.episodes} episode{'s' if self.episodes != 1 else ''}"

    def glance(self) -> str:
        """One Markdown list line: zone and stage, the lesson, how often it was learned and
        used, and the id of its full entry."""
        track = f"{self.learned()}, used {self.uses}x; {self.id}"
        return f"- *{self.zone}, {self.stage}*: {self.lesson} ({track})"

    def markdown(self) -> str:
        """A readable Markdown block."""
        c = self.conditions
        pre = "; ".join(c.preconditions) or "none"
        return (
            f"#### {self.id} ({self.zone}, {self.stage})\n"
            f"- **Situation:** {self.situation}\n- **Action:** {self.action}\n"
            f"- **Outcome:** {self.outcome}\n- **Lesson:** {self.lesson}\n"
            f"- **Applies to:** {', '.join(c.envs) or '-'}; {self.turns()}; preconditions: {pre}\n"
            f"- **Track record:** {self.learned()}; offered at {self.offers} turns, retrieved "
            f"at {self.retrievals} turns of {self.uses} episodes, success "
            f"{self.success_rate:.0%}; "
            f"origin {self.origin}"
            + (f" of {', '.join(self.parents)}" if self.parents else "")
            + "\n"
            + (f"- **From:** {self.sources()}\n" if self.provenance else "")
        )

    def turns(self) -> str:
        """The agent turns it was learned at, counted from 1 (``turn 3``, ``turns 2-5``)."""
        first, last = (t + 1 for t in self.conditions.turn_range)
        return f"turn {first}" if first == last else f"turns {first}-{last}"

    def sources(self) -> str:
        """Where it was distilled from: trajectory (condition/user/episode) and the index of
        the agent's message in that session's record."""
        return "; ".join(f"{p.source}, record turn {p.turn}" for p in self.provenance[:4])
