"""Evolution: mutation, generalization, crossover and pruning over the library."""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Literal

from pydantic import BaseModel, Field

from rapport.llm import GenerateConfig, Message, Model, ModelError

from ._experience import ANY_ENV, Experience
from ._library import ExperienceLibrary
from ._prompts import render
from ._verify import TurnFacts, lesson_problems

_ANY_TURN = TurnFacts(turn=0, repeated=True)
"""What a rewrite's lesson is checked against: no one key turn (so no "again" or "ask"
check), only the form (short, not English, looping, speaking of the scoring)."""

Operator = Literal["mutation", "generalization", "crossover"]


@dataclass(frozen=True)
class EvolutionSettings:
    """The schedule and the operator probabilities."""

    iterations: int = 5
    t_start: float = 1.0
    t_end: float = 0.1
    p_mutation: float = 0.10
    p_generalization: float = 0.05
    p_crossover: float = 0.02
    prune_every: int = 2
    min_uses: int = 2
    min_success: float = 0.3
    general_success: float = 0.7
    max_pairs: int = 200
    keep_log_fields: bool = False
    """A mutation rewrites only the lesson, keeping the situation, action and outcome the
    log wrote (PRIME's ``distill_fields: lesson``); generalization and crossover write new
    ones either way."""


def meta_temperature(iteration: int, s: EvolutionSettings) -> float:
    """Linear anneal from ``t_start`` (first iteration) to ``t_end`` (last)."""
    if s.iterations <= 1:
        return s.t_start
    frac = min(iteration, s.iterations - 1) / (s.iterations - 1)
    return s.t_start + (s.t_end - s.t_start) * frac


@dataclass(frozen=True)
class Operation:
    """One operator application drawn for an iteration."""

    operator: Operator
    targets: tuple[str, ...]


def can_mutate(e: Experience) -> bool:
    """Retrieved before a poor outcome."""
    return e.active and e.poor_uses > 0


def can_generalize(e: Experience, s: EvolutionSettings) -> bool:
    """Succeeds in >= 0.7 of its uses and still tied to specific environments."""
    return (
        e.active
        and e.uses > 0
        and e.success_rate >= s.general_success
        and ANY_ENV not in e.conditions.envs
    )


def complementary(a: Experience, b: Experience) -> bool:
    """Same stage, shared environment, different zone: each says what the other lacks."""
    shared = set(a.conditions.envs) & set(b.conditions.envs) or ANY_ENV in (
        a.conditions.envs + b.conditions.envs
    )
    return a.stage == b.stage and a.zone != b.zone and bool(shared)


def draw_operations(
    library: ExperienceLibrary, rng: random.Random, s: EvolutionSettings
) -> list[Operation]:
    """Which operators fire this iteration: one Bernoulli draw per eligible target."""
    active = sorted(library.active(), key=lambda e: e.id)
    ops = []
    for e in active:
        if can_mutate(e) and rng.random() < s.p_mutation:
            ops.append(Operation("mutation", (e.id,)))
        if can_generalize(e, s) and rng.random() < s.p_generalization:
            ops.append(Operation("generalization", (e.id,)))
    pairs = [(a, b) for i, a in enumerate(active) for b in active[i + 1 :] if complementary(a, b)]
    rng.shuffle(pairs)
    ops += [
        Operation("crossover", (a.id, b.id))
        for a, b in pairs[: s.max_pairs]
        if rng.random() < s.p_crossover
    ]
    return ops


def prune_ids(library: ExperienceLibrary, s: EvolutionSettings) -> list[str]:
    """Superseded, or old enough to judge and retrieved < 2 times or succeeding < 30%."""
    out = []
    for e in library.experiences.values():
        old = library.iteration - e.created_iteration >= s.prune_every
        weak = e.uses < s.min_uses or e.success_rate < s.min_success
        if not e.active or (old and weak):
            out.append(e.id)
    return out


class Rewrite(BaseModel):
    """The memory model's new text for an experience."""

    situation: str = Field(max_length=300)
    action: str = Field(max_length=300)
    outcome: str = Field(max_length=300)
    lesson: str = Field(max_length=300)


def operation_prompt(op: Operation, library: ExperienceLibrary) -> str:
    """The rewrite prompt for an operation."""
    first = library.experiences[op.targets[0]]
    base = {
        "situation": first.situation,
        "action": first.action,
        "outcome": first.outcome,
        "lesson": first.lesson,
        "stage": first.stage,
        "envs": ", ".join(first.conditions.envs),
    }
    if op.operator == "mutation":
        return render("mutate", uses=first.uses, poor=first.poor_uses, **base)
    if op.operator == "generalization":
        return render("generalize", rate=f"{first.success_rate:.0%}", **base)
    second = library.experiences[op.targets[1]]
    return render(
        "crossover",
        zone_a=first.zone,
        situation_a=first.situation,
        action_a=first.action,
        lesson_a=first.lesson,
        zone_b=second.zone,
        situation_b=second.situation,
        action_b=second.action,
        lesson_b=second.lesson,
    )


def child_of(
    op: Operation, library: ExperienceLibrary, text: Rewrite, *, keep_log_fields: bool = False
) -> Experience:
    """The new experience an operation yields (its parents get ``superseded_by``).

    ``keep_log_fields``: a mutation takes only the new lesson (see `EvolutionSettings`).
    """
    parents = [library.experiences[t] for t in op.targets]
    first = parents[0]
    envs = sorted({env for p in parents for env in p.conditions.envs})
    if op.operator == "generalization":
        envs = [ANY_ENV]
    lo = min(p.conditions.turn_range[0] for p in parents)
    hi = max(p.conditions.turn_range[1] for p in parents)
    written = text.model_dump()
    if keep_log_fields and op.operator == "mutation":
        written = {"lesson": text.lesson}
    return first.model_copy(
        deep=True,
        update={
            **written,
            "id": library.new_id(),
            "origin": op.operator,
            "parents": list(op.targets),
            "uses": 0,
            "successes": 0,
            "poor_uses": 0,
            "created_iteration": library.iteration,
            "superseded_by": None,
            "zone": "golden" if op.operator == "crossover" else first.zone,
            "conditions": first.conditions.model_copy(
                update={"envs": envs, "turn_range": (lo, hi)}
            ),
            "provenance": [p for parent in parents for p in parent.provenance],
        },
    )


@dataclass
class IterationResult:
    """What one evolution iteration changed."""

    added: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)
    dropped: list[str] = field(default_factory=list)
    """Rewritten lessons that failed a check (`lesson_problems`); the parents stay."""


async def evolve_once(
    library: ExperienceLibrary, model: Model, rng: random.Random, s: EvolutionSettings
) -> IterationResult:
    """One iteration: draw operators, rewrite with the memory model, prune on schedule.

    A rewrite whose lesson fails a check (`lesson_problems`) is not applied; it is listed
    in the version's ``dropped``."""
    result = IterationResult()
    temperature = meta_temperature(library.iteration, s)
    for op in draw_operations(library, rng, s):
        if any(not library.experiences[t].active for t in op.targets):
            continue
        prompt = [Message(role="user", content=operation_prompt(op, library))]
        try:
            out = await model.generate(
                prompt,
                schema=Rewrite,
                config=GenerateConfig(temperature=temperature, max_tokens=400),
            )
        except ModelError as exc:
            result.failed.append(f"{op.operator} {op.targets}: {exc}")
            continue
        problems = lesson_problems(out.parsed.lesson, _ANY_TURN)
        if problems:
            result.dropped.append(
                f'"{out.parsed.lesson[:120]}" ({op.operator} of {", ".join(op.targets)}: '
                f"{'; '.join(problems)})"
            )
            continue
        child = child_of(op, library, out.parsed, keep_log_fields=s.keep_log_fields)
        for t in op.targets:
            library.experiences[t].superseded_by = child.id
        library.add(child)
        result.added.append(child.id)
    library.iteration += 1
    if library.iteration % s.prune_every == 0:
        result.removed = prune_ids(library, s)
        library.remove(result.removed)
    library.commit(
        added=result.added,
        removed=result.removed,
        dropped=result.dropped,
        note=f"evolution iteration {library.iteration} (T={temperature:.2f})",
    )
    return result
