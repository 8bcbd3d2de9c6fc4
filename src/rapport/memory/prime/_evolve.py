"""Evolution: mutation, generalization, crossover and pruning over the library."""

from __future__ import annotations

import random
import re
from dataclasses import dataclass, field
from typing import Literal

from pydantic import BaseModel, Field

from rapport.llm import GenerateConfig, Message, Model, ModelError, derive_seed

from ._experience import ANY_ENV, EventKind, Experience
from ._library import ExperienceLibrary
from ._prompts import render
from ._verify import TurnFacts, lesson_problems, same_lesson

_ANY_TURN = TurnFacts(turn=0, repeated=True)
"""What a rewrite's lesson is checked against: no one key turn (so no "again" or "ask"
check), only the form (short, not English, looping, speaking of the scoring)."""

Operator = Literal["mutation", "generalization", "crossover"]
PruneBasis = Literal["rounds", "offers"]
"""What pruning judges an experience's retrievals over (`EvolutionSettings.prune_basis`)."""


@dataclass(frozen=True)
class EvolutionSettings:
    """The schedule and the operator probabilities."""

    iterations: int = 5
    """Iterations the meta-temperature anneals over (one per round)."""
    t_start: float = 1.0
    t_end: float = 0.1
    p_mutation: float = 0.10
    p_generalization: float = 0.05
    p_crossover: float = 0.02
    prune_every: int = 2
    min_retrievals: int = 2
    prune_basis: PruneBasis = "rounds"
    """``rounds``: an experience retrieved fewer than ``min_retrievals`` times over the
    rounds since it was made is pruned; ``offers``: only once it was offered (its
    environment and stage) at ``min_offers`` turns or more since it was made."""
    min_offers: int = 4
    min_success: float = 0.3
    general_success: float = 0.7
    max_pairs: int = 200
    min_overlap: float = 0.2
    """Word overlap of two situations that counts as situational overlap for crossover
    when their stages differ."""
    stale_after: int = 2
    """Pruning also drops an experience no episode retrieved in the last this many
    iterations' rounds (Fig. 5: "not retrieved in last N episodes"; N is the episodes of
    the last pruning interval)."""
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
    """Succeeds in >= 0.7 of its uses, in more than one environment (Fig. 5: "succeeds
    across multiple environments"), and is still tied to specific environments."""
    return (
        e.active
        and e.uses > 0
        and e.success_rate >= s.general_success
        and len(set(e.success_envs)) > 1
        and ANY_ENV not in e.conditions.envs
    )


_WORD = re.compile(r"[a-z]{3,}")
_COMMON = frozenset({"the", "and", "you", "for", "with", "that", "this", "has", "have", "are"})


def _situation_words(e: Experience) -> set[str]:
    text = " ".join([e.situation, *e.conditions.preconditions]).lower()
    return set(_WORD.findall(text)) - _COMMON


def overlap(a: Experience, b: Experience) -> float:
    """How much two experiences' situations (and preconditions) share: the Jaccard index
    of their content words."""
    x, y = _situation_words(a), _situation_words(b)
    return len(x & y) / len(x | y) if x | y else 0.0


def complementary(a: Experience, b: Experience, s: EvolutionSettings | None = None) -> bool:
    """A crossover pair (Table 3, Fig. 5): a shared environment, situations that overlap
    (the same stage, or ``min_overlap`` of their words), and different insights (another
    zone, or a lesson that says something else)."""
    at_least = (s or EvolutionSettings()).min_overlap
    shared = set(a.conditions.envs) & set(b.conditions.envs) or ANY_ENV in (
        a.conditions.envs + b.conditions.envs
    )
    overlapping = a.stage == b.stage or overlap(a, b) >= at_least
    different = a.zone != b.zone or not same_lesson(a.lesson, b.lesson)
    return bool(shared) and overlapping and different


def evolution_rng(seed: int, iteration: int) -> random.Random:
    """The random draws of evolution iteration ``iteration`` of a run with ``seed``."""
    return random.Random(derive_seed(seed, f"prime:evolution:{iteration}"))


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
    pairs = [
        (a, b) for i, a in enumerate(active) for b in active[i + 1 :] if complementary(a, b, s)
    ]
    rng.shuffle(pairs)
    ops += [
        Operation("crossover", (a.id, b.id))
        for a, b in pairs[: s.max_pairs]
        if rng.random() < s.p_crossover
    ]
    return ops


def prune_ids(library: ExperienceLibrary, s: EvolutionSettings) -> dict[str, str]:
    """The active experiences to prune now, each with why: those that have lived through at
    least one round (made before this iteration) and, since they were made, were retrieved
    fewer than ``min_retrievals`` times or succeeded in under ``min_success`` of the
    episodes that retrieved them.

    With ``prune_basis="offers"``, one retrieved too few times is judged only once it was
    offered at ``min_offers`` turns or more; until then it is kept.
    """
    out = {}
    for e in sorted(library.active(), key=lambda e: e.created_iteration):
        first, last = e.created_iteration + 1, library.iteration
        if last < first:
            continue  # made this iteration: it has not been offered yet
        rounds = f"round {first}" if first == last else f"rounds {first}-{last}"
        seen = e.created_iteration if e.last_retrieved is None else e.last_retrieved
        if last - seen >= s.stale_after and e.retrievals >= s.min_retrievals:
            out[e.id] = f"not retrieved in the last {last - seen} rounds' episodes"
        elif e.retrievals < s.min_retrievals:
            if s.prune_basis == "offers" and e.offers < s.min_offers:
                continue  # not offered often enough to judge
            out[e.id] = _few_retrievals(e, s, rounds)
        elif e.success_rate < s.min_success:
            out[e.id] = (
                f"solved {e.successes} of the {e.uses} episodes that retrieved it over "
                f"{rounds} ({e.success_rate:.0%} < {s.min_success:.0%})"
            )
    return out


def _few_retrievals(e: Experience, s: EvolutionSettings, rounds: str) -> str:
    """Why an experience retrieved too few times is pruned, on the settings' basis."""
    times = "time" if e.retrievals == 1 else "times"
    if s.prune_basis == "offers":
        turns = "turn" if e.offers == 1 else "turns"
        where = f"at {e.offers} offered {turns}"
    else:
        where = f"over {rounds}"
    return f"retrieved {e.retrievals} {times} {where} (< {s.min_retrievals})"


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
            "offers": 0,
            "retrievals": 0,
            "uses": 0,
            "successes": 0,
            "poor_uses": 0,
            "created_iteration": library.iteration,
            "superseded_by": None,
            "pruned": None,
            "events": [],
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
    touched: dict[str, list[str]] = field(default_factory=dict)
    """Operator (``mutation``, ``generalization``, ``crossover``) -> the experiences it
    rewrote (its parents), in the order it ran."""
    removed: dict[str, str] = field(default_factory=dict)
    """Pruned experience -> why."""
    failed: list[str] = field(default_factory=list)
    dropped: list[str] = field(default_factory=list)
    """Rewritten lessons that failed a check (`lesson_problems`); the parents stay."""
    temperature: float = 0.0

    def summary(self) -> str:
        """``mutation of exp-3; pruned 2`` (or ``no change``)."""
        parts = [f"{op} of {', '.join(ids)}" for op, ids in self.touched.items() if ids]
        if self.removed:
            parts.append(f"pruned {len(self.removed)}")
        if self.dropped:
            parts.append(
                f"{len(self.dropped)} rewrite{'s' if len(self.dropped) > 1 else ''} not kept"
            )
        if self.failed:
            parts.append(f"{len(self.failed)} failed")
        return "; ".join(parts) or "no change"


_VERB: dict[str, EventKind] = {
    "mutation": "mutated",
    "generalization": "generalized",
    "crossover": "crossed",
}


async def evolve_once(
    library: ExperienceLibrary, model: Model, rng: random.Random, s: EvolutionSettings
) -> IterationResult:
    """One iteration over the whole library: draw operators, rewrite with the memory model,
    prune on schedule (every ``prune_every`` iterations). Advances ``library.iteration``;
    the caller commits the change as a version.

    A rewrite whose lesson fails a check (`lesson_problems`) or says what one of its parents
    says (`same_lesson`: a mutation that changed nothing, a crossover that copied one side) is
    not applied; it is listed in ``dropped``. Every change is an event on the experiences it
    touched.
    """
    temperature = meta_temperature(library.iteration, s)
    result = IterationResult(temperature=temperature)
    library.iteration += 1
    iteration = library.iteration
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
        problems += [
            f"says what {t} says"
            for t in op.targets
            if same_lesson(out.parsed.lesson, library.experiences[t].lesson)
        ]
        if problems:
            result.dropped.append(
                f'"{out.parsed.lesson[:120]}" ({op.operator} of {", ".join(op.targets)}: '
                f"{'; '.join(problems)})"
            )
            continue
        child = child_of(op, library, out.parsed, keep_log_fields=s.keep_log_fields)
        child.record(iteration, "created", f"{op.operator} of {', '.join(op.targets)}", *op.targets)
        for t in op.targets:
            parent = library.experiences[t]
            parent.superseded_by = child.id
            partners = [other for other in op.targets if other != t]
            note = f"with {', '.join(partners)}" if partners else ""
            parent.record(iteration, _VERB[op.operator], note, child.id)
        library.add(child)
        result.added.append(child.id)
        result.touched.setdefault(op.operator, []).extend(op.targets)
    if iteration % s.prune_every == 0:
        result.removed = prune_ids(library, s)
        for exp_id, why in result.removed.items():
            e = library.experiences[exp_id]
            e.pruned = why
            e.record(iteration, "pruned", why)
        library.touched()
    return result
