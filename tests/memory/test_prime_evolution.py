"""Evolution operators fire at their probabilities; rewrites keep lineage; pruning rules."""

from __future__ import annotations

import json
import math
import random

import pytest

from rapport.llm import ModelRoles, Request, ScriptedAPI
from rapport.memory.prime import (
    Conditions,
    EvolutionSettings,
    Experience,
    ExperienceLibrary,
    complementary,
    draw_operations,
    evolve_once,
    meta_temperature,
    prune_ids,
)


def exp(i: int, **kw: object) -> Experience:
    base: dict[str, object] = dict(
        id=f"exp-{i}",
        situation=f"situation {i}",
        action="ask",
        outcome="ok",
        lesson="do it",
        stage="verification",
        zone="golden",
        conditions=Conditions(envs=["telepathy"]),
    )
    base.update(kw)
    return Experience.model_validate(base)


def library(exps: list[Experience]) -> ExperienceLibrary:
    lib = ExperienceLibrary()
    for e in exps:
        lib.add(e)
    return lib


def fired_share(lib: ExperienceLibrary, operator: str, eligible: int, rounds: int) -> float:
    rng, s = random.Random(0), EvolutionSettings()
    fired = sum(
        op.operator == operator for _ in range(rounds) for op in draw_operations(lib, rng, s)
    )
    return fired / (eligible * rounds)


def within(share: float, p: float, n: int) -> bool:
    return abs(share - p) <= 4 * math.sqrt(p * (1 - p) / n)


def test_mutation_fires_at_p_010_on_experiences_used_before_poor_outcomes() -> None:
    lib = library([exp(i, uses=1, poor_uses=1) for i in range(100)])
    share = fired_share(lib, "mutation", 100, 200)
    assert within(share, 0.10, 20_000), share


TWO_ENVS = ["telepathy", "function"]


def test_generalization_fires_at_p_005_on_reliable_experiences() -> None:
    lib = library([exp(i, uses=10, successes=8, success_envs=TWO_ENVS) for i in range(100)])
    share = fired_share(lib, "generalization", 100, 200)
    assert within(share, 0.05, 20_000), share


def test_generalization_needs_success_in_more_than_one_environment() -> None:
    lib = library([exp(i, uses=10, successes=9, success_envs=["telepathy"]) for i in range(50)])
    assert fired_share(lib, "generalization", 50, 50) == 0


def test_crossover_pairs_overlapping_situations_with_different_insights() -> None:
    def pair(**b: object) -> bool:
        a = exp(1, situation="the user named a city and a budget", lesson="Ask about dates.")
        other: dict[str, object] = {
            "situation": "the user named a budget and a city",
            "lesson": "Ask about hotels first.",
            "stage": "exploration",
        }
        return complementary(a, exp(2, **{**other, **b}))

    assert pair(), "same zone, overlapping situations, another lesson"
    assert not pair(lesson="Ask about dates."), "the same insight"
    assert not pair(conditions=Conditions(envs=["function"])), "no shared environment"
    assert not pair(situation="nothing was said yet"), "another stage, no overlap"


def test_crossover_fires_at_p_002_on_complementary_pairs() -> None:
    exps = [exp(i, zone="golden" if i % 2 else "warning") for i in range(20)]
    lib = library(exps)  # 10 x 10 = 100 complementary pairs
    share = fired_share(lib, "crossover", 100, 200)
    assert within(share, 0.02, 20_000), share


def test_ineligible_experiences_never_fire() -> None:
    lib = library([exp(i) for i in range(50)])  # unused, all golden: nothing applies
    assert fired_share(lib, "mutation", 50, 50) == 0
    assert fired_share(lib, "generalization", 50, 50) == 0
    assert fired_share(lib, "crossover", 50, 50) == 0


def test_meta_temperature_anneals_from_1_to_01_over_5_iterations() -> None:
    s = EvolutionSettings()
    assert [meta_temperature(i, s) for i in range(5)] == pytest.approx(
        [1.0, 0.775, 0.55, 0.325, 0.1]
    )


def test_pruning_rules_by_hand() -> None:
    lib = library(
        [
            exp(1, retrievals=5, uses=5, successes=4, created_iteration=1, last_retrieved=4),
            exp(2, retrievals=1, uses=1, successes=1, created_iteration=1),  # retrieved once
            exp(3, retrievals=6, uses=5, successes=1, created_iteration=2, last_retrieved=3),
            exp(7, retrievals=5, uses=5, successes=5, created_iteration=1, last_retrieved=2),
            exp(4, retrievals=0, created_iteration=4),  # made this iteration: not judged yet
            exp(5, retrievals=0, uses=0, superseded_by="exp-9"),  # inactive: kept for lineage
            exp(6, retrievals=2, uses=1, successes=0, created_iteration=3),  # 0% solved
        ]
    )
    lib.iteration = 4
    assert prune_ids(lib, EvolutionSettings()) == {
        "exp-2": "retrieved 1 time over rounds 2-4 (< 2)",
        "exp-3": "solved 1 of the 5 episodes that retrieved it over rounds 3-4 (20% < 30%)",
        "exp-6": "solved 0 of the 1 episodes that retrieved it over round 4 (0% < 30%)",
        "exp-7": "not retrieved in the last 2 rounds' episodes",
    }


def test_by_default_an_experience_never_offered_is_pruned_for_too_few_retrievals() -> None:
    lib = library([exp(1, created_iteration=1), exp(2, offers=9, created_iteration=1)])
    lib.iteration = 2
    assert prune_ids(lib, EvolutionSettings()) == {
        "exp-1": "retrieved 0 times over round 2 (< 2)",
        "exp-2": "retrieved 0 times over round 2 (< 2)",
    }


def test_on_the_offers_basis_only_experiences_offered_often_enough_are_judged() -> None:
    lib = library(
        [
            exp(1, offers=3, created_iteration=1),  # offered at 3 turns: not judged yet
            exp(2, offers=4, created_iteration=1),  # at 4, never retrieved
            exp(3, offers=5, retrievals=1, uses=1, successes=1, created_iteration=1),
            exp(4, offers=9, retrievals=3, uses=2, successes=1, created_iteration=1),  # kept
            exp(5, offers=3, retrievals=2, uses=2, created_iteration=1),  # 0% solved
            exp(6, offers=8, created_iteration=2),  # made this iteration
            exp(7, offers=1, created_iteration=1),
        ]
    )
    lib.iteration = 2
    s = EvolutionSettings(prune_basis="offers", min_offers=4)
    assert prune_ids(lib, s) == {
        "exp-2": "retrieved 0 times at 4 offered turns (< 2)",
        "exp-3": "retrieved 1 time at 5 offered turns (< 2)",
        "exp-5": "solved 0 of the 2 episodes that retrieved it over round 2 (0% < 30%)",
    }
    once = EvolutionSettings(prune_basis="offers", min_offers=1)
    assert prune_ids(lib, once)["exp-7"] == "retrieved 0 times at 1 offered turn (< 2)"


async def test_pruning_marks_experiences_and_keeps_them_for_their_history() -> None:
    lib = library([exp(1, retrievals=1, uses=1, created_iteration=1)])
    lib.iteration = 1
    model = ModelRoles({"all": ScriptedAPI(responder=_rewriter)}).get("memory")
    result = await evolve_once(lib, model, random.Random(0), EvolutionSettings())
    assert lib.iteration == 2 and result.removed == {"exp-1": "retrieved 1 time over round 2 (< 2)"}
    e = lib.experiences["exp-1"]
    assert not e.active and e.pruned == result.removed["exp-1"]
    assert e.events[-1].kind == "pruned" and e.events[-1].iteration == 2
    lib.commit(added=[], removed=list(result.removed), note="evolution")
    md = lib.to_markdown()
    assert (
        "- exp-1 (golden, verification; telepathy), iteration 2: retrieved 1 time over "
        "round 2 (< 2). do it" in md
    )
    assert "| 2 | 1 | 0 | 0 | 0 | 0 | 0 | 0 | 0 | 0 | 0 | 1 | 0 |" in md


def _rewriter(request: Request) -> str:
    return json.dumps(
        {
            "situation": "sharper situation",
            "action": "ask a narrower question",
            "outcome": "fewer wasted turns",
            "lesson": "Narrow the field down early.",
        }
    )


async def test_a_rewrite_whose_lesson_fails_a_check_is_not_applied() -> None:
    lib = library([exp(i, uses=1, poor_uses=1) for i in range(40)])
    lesson = "ask it, ask it, ask it, ask it"
    loops = json.dumps({"situation": "s", "action": "a", "outcome": "o", "lesson": lesson})
    model = ModelRoles({"all": ScriptedAPI(responder=lambda r: loops)}).get("memory")
    result = await evolve_once(lib, model, random.Random(1), EvolutionSettings())
    assert not result.added and result.dropped and all(e.active for e in lib.active())
    assert "repeats itself" in result.dropped[0] and "mutation of exp-" in result.dropped[0]
    assert len(lib.active()) == 40 and not lib.history, "the caller commits the update"


async def test_a_rewrite_that_says_what_its_parent_says_is_not_applied() -> None:
    lesson = "Ask whether it is an object or a place before guessing."
    lib = library([exp(i, uses=1, poor_uses=1, lesson=lesson) for i in range(40)])
    same = json.dumps({"situation": "s", "action": "a", "outcome": "o", "lesson": lesson})
    model = ModelRoles({"all": ScriptedAPI(responder=lambda r: same)}).get("memory")
    result = await evolve_once(lib, model, random.Random(1), EvolutionSettings())
    assert not result.added and result.dropped
    assert "says what exp-" in result.dropped[0] and "mutation of exp-" in result.dropped[0]
    assert len(lib.active()) == 40 and all(not e.events for e in lib.active())


async def test_evolve_once_replaces_a_mutated_experience_and_records_both_sides() -> None:
    lib = library([exp(i, uses=1, poor_uses=1, offers=5) for i in range(40)])
    model = ModelRoles({"all": ScriptedAPI(responder=_rewriter)}).get("memory")
    result = await evolve_once(lib, model, random.Random(1), EvolutionSettings())
    assert result.added and lib.iteration == 1 and lib.version == 0
    child = lib.experiences[result.added[0]]
    assert child.origin == "mutation" and child.lesson == "Narrow the field down early."
    parent = lib.experiences[child.parents[0]]
    assert parent.superseded_by == child.id and not parent.active
    assert result.touched["mutation"][0] == parent.id
    assert parent.events[-1].line() == f"iteration 1: mutated -> {child.id}"
    assert child.events[0].line() == f"iteration 1: created (mutation of {parent.id})"
    assert child.provenance == parent.provenance
    assert child.situation == "sharper situation"
    assert (child.offers, parent.offers) == (0, 5), "the child's offers count from its making"

    lib = library([exp(i, uses=1, poor_uses=1) for i in range(40)])
    kept = EvolutionSettings(keep_log_fields=True)
    result = await evolve_once(lib, model, random.Random(1), kept)
    child = lib.experiences[result.added[0]]
    parent = lib.experiences[child.parents[0]]
    assert child.lesson == "Narrow the field down early."
    assert (child.situation, child.action, child.outcome) == (
        parent.situation,
        parent.action,
        parent.outcome,
    ), "the log's fields stay; only the lesson is rewritten"


async def test_generalization_opens_the_experience_to_any_environment() -> None:
    lib = library([exp(i, uses=10, successes=9, success_envs=TWO_ENVS) for i in range(200)])
    model = ModelRoles({"all": ScriptedAPI(responder=_rewriter)}).get("memory")
    result = await evolve_once(lib, model, random.Random(3), EvolutionSettings())
    children = [lib.experiences[i] for i in result.added]
    assert children and all(c.conditions.envs == ["*"] for c in children)
    assert all(c.applies_to("function") for c in children)
