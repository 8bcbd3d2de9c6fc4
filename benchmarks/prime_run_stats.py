"""What PRIME's library did in a stored gym run, per round: prints JSON.

For each PRIME condition of a run dir (``rapport run gym ... --memory prime``), from the
run log alone (no model is called; the embedder re-embeds the stored texts):

- per round: the active experiences the round's episodes found (by zone and stage), and
  for every agent turn the similarity of its situation to each experience of its
  environment, both within the stage prefilter and across stages; how many turns
  retrieved anything at the threshold, and whether that matches the recall events the
  run logged;
- the agent calls the response cache answered (the same request was made before, as a
  paired condition's is when memory added nothing), and the episodes whose moves were
  all the paired episode's;
- every turn that retrieved: the scores, and next to the paired episode of ``--paired``
  (default ``none``, the same episode seed) whether the notes reached the agent's prompt
  (its prompt tokens at that turn against the paired one's) and whether the move changed;
- per evolution iteration: how many experiences each operator could act on (retrieved
  before a poor outcome for mutation, solved in >= 70% of its uses for generalization,
  complementary pairs for crossover), the expected number of firings at the operator
  probabilities, and the operators the run's seeded RNG draws on that state.

Each round also counts the turns that would have retrieved at the paper's threshold
(``turns_retrieved_at_0.6``), the stage prefilter unchanged.

``python benchmarks/prime_run_stats.py RUN_DIR [--embedder auto|minilm|hashing]``; without
RUN_DIR it first plays a small run on the scripted model (``scripted/auto``, the hashing
embedder) in a temporary folder and reports on that.
The threshold, embedder and evolution seed come from the run's ``prime`` memory options;
the embedder must be the one the run used (the run's ``retrieval`` record names it).
"""

from __future__ import annotations

import argparse
import json
import random
import tempfile
from collections import Counter
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

from rapport.envs.gyms import GymBenchmark
from rapport.eval import run as play
from rapport.llm import Message
from rapport.log import ExperimentConfig, RecallEvent, RewardEvent, SessionRecord, UserSpec
from rapport.memory import get_embedder
from rapport.memory.prime import (
    PAPER_SIMILARITY,
    SIMILARITY,
    EvolutionSettings,
    ExperienceLibrary,
    PrimeOptions,
    draw_operations,
    evolution_rng,
    explorations,
    library_from_state,
    situation_text,
    stage_of,
)
from rapport.store import RunStore


def conversations(record: SessionRecord) -> list[list[Message]]:
    """What the agent's history held before each of its moves: the opening, then each move
    as the gym read it and the gym's reply (as the gym episode builds it)."""
    opening = next((t.text for t in record.turns if t.index == 0), "")
    history = [Message(role="user", content=opening)]
    out = []
    for step in explorations(record):
        out.append(list(history))
        history += [
            Message(role="assistant", content=step.action),
            Message(role="user", content=step.observation),
        ]
    return out


def libraries(store: RunStore, condition: str) -> dict[int, ExperienceLibrary]:
    """Round -> the library that round's episodes found (the last version of the one
    before; round 0 finds an empty library unless the run loaded one)."""
    by_version: dict[int, ExperienceLibrary] = {}
    for version in store.memory_versions(condition=condition):
        if "library" in version.state.data:
            lib = library_from_state(version.state)
            by_version.setdefault(lib.version, lib)
    out: dict[int, ExperienceLibrary] = {}
    for version in sorted(by_version):
        lib = by_version[version]
        out[lib.rounds] = lib
    return out


def at_draw(lib: ExperienceLibrary) -> ExperienceLibrary:
    """The library as evolution iteration ``lib.iteration`` drew its operators: what
    this iteration pruned or superseded was still active then."""
    copy = lib.model_copy(deep=True)
    now = lib.iteration
    for e in copy.experiences.values():
        if e.created_iteration == now and e.origin != "distilled":
            e.pruned = "made after the draw"
            continue
        if e.pruned and any(ev.kind == "pruned" and ev.iteration == now for ev in e.events):
            e.pruned = None
        if e.superseded_by and any(
            ev.kind in ("mutated", "generalized", "crossed") and ev.iteration == now
            for ev in e.events
        ):
            e.superseded_by = None
    return copy


def probabilities(settings: EvolutionSettings) -> dict[str, float]:
    """Each operator's firing probability per eligible target."""
    return {
        "mutation": settings.p_mutation,
        "generalization": settings.p_generalization,
        "crossover": settings.p_crossover,
    }


def operators(lib: ExperienceLibrary, seed: int, settings: EvolutionSettings) -> dict[str, Any]:
    """Eligible targets, expected firings and the seeded draw of one iteration."""
    state = at_draw(lib)
    always = replace(settings, p_mutation=1.0, p_generalization=1.0, p_crossover=1.0)
    eligible = Counter(op.operator for op in draw_operations(state, random.Random(0), always))
    p = probabilities(settings)
    rng = evolution_rng(seed, lib.iteration)
    drawn = Counter(op.operator for op in draw_operations(state, rng, settings))
    return {
        "iteration": lib.iteration,
        "active_at_draw": len(state.active()),
        "eligible": {k: eligible.get(k, 0) for k in p},
        "expected_firings": round(sum(p[k] * eligible.get(k, 0) for k in p), 4),
        "drawn": dict(drawn),
    }


def turn_rows(
    record: SessionRecord, lib: ExperienceLibrary | None, encode: Any, threshold: float
) -> list[dict[str, Any]]:
    """Per agent turn: the situation's similarity to the environment's experiences."""
    outcome = record.outcome
    env, horizon = getattr(outcome, "env", ""), getattr(outcome, "horizon", 16)
    recalled = {e.turn for e in record.events_of(RecallEvent)}
    rewards = record.events_of(RewardEvent)
    active = [e for e in (lib.active() if lib else []) if e.applies_to(env)]
    vectors = encode([e.embedding_text() for e in active]) if active else None
    stages = [stage_of(k, horizon) for k in range(len(rewards))]
    situations = [
        situation_text(conversation, env, stage)
        for conversation, stage in zip(conversations(record), stages, strict=True)
    ]
    queries = encode(situations) if situations and vectors is not None else None
    rows = []
    for k, (event, stage, situation) in enumerate(zip(rewards, stages, situations, strict=True)):
        sims = (queries[k] @ vectors.T).tolist() if queries is not None else []
        in_stage = [(e.id, s) for e, s in zip(active, sims, strict=True) if e.stage == stage]
        rows.append(
            {
                "turn": k + 1,
                "stage": stage,
                "situation": situation,
                "best_any_stage": round(max(sims), 3) if sims else None,
                "in_stage": {i: round(s, 3) for i, s in in_stage},
                "retrieved": [i for i, s in in_stage if s >= threshold],
                "recall_logged": event.turn in recalled,
                "move": event.move,
            }
        )
    return rows


def agent_prompt_tokens(record: SessionRecord) -> list[int] | None:
    """Prompt tokens of each agent move (None when a resample makes calls and moves differ)."""
    calls = [u.prompt_tokens for u in record.usage if u.role == "agent"]
    return calls if len(calls) == len(record.events_of(RewardEvent)) else None


def condition_stats(
    store: RunStore, condition: str, paired: str, embedder: str | None
) -> dict[str, Any]:
    run = store.run()
    options = PrimeOptions.model_validate(run.config.memory_options.get("prime", {}))
    seed = run.config.seed if options.seed is None else options.seed
    bench = GymBenchmark.from_config(run.config)
    found = libraries(store, condition)
    rounds = min(bench.options.rounds, bench.options.train_episodes)
    final = found.get(rounds) or (found[max(found)] if found else None)
    encoder = get_embedder(embedder or options.embedder)

    def encode(texts: list[str]) -> np.ndarray:
        return np.asarray(encoder.encode(texts), dtype=np.float32)

    threshold = options.min_similarity or SIMILARITY.get(encoder.name, PAPER_SIMILARITY)
    users = {u.user_id: UserSpec.model_validate(u.spec) for u in store.users()}
    phase: dict[tuple[str, int], int] = {}
    for user_id, spec in users.items():
        for s in bench.sessions(spec, 0, run.config.seed):
            phase[(user_id, s.index)] = s.phase
    per_round: dict[int, dict[str, Any]] = {}
    hits = []
    for record in store.sessions(condition=condition):
        r = phase.get((record.user_id, record.index), rounds)
        lib = found.get(r) if r < rounds else final
        rows = turn_rows(record, lib, encode, threshold)
        stats = per_round.setdefault(
            r,
            {
                "round": "eval" if r >= rounds else r + 1,
                "library_version": lib.version if lib else 0,
                "active": len(lib.active()) if lib else 0,
                "zones": dict(Counter(e.zone for e in lib.active())) if lib else {},
                "stages": dict(Counter(e.stage for e in lib.active())) if lib else {},
                "episodes": 0,
                "turns": 0,
                "turns_with_same_env_experience": 0,
                "turns_with_candidate_in_stage": 0,
                "turns_retrieved": 0,
                f"turns_retrieved_at_{PAPER_SIMILARITY:g}": 0,
                "recall_events_logged": 0,
                "agent_calls": 0,
                "agent_calls_cached": 0,
                f"episodes_same_moves_as_{paired}": 0 if paired else None,
                "best_any_stage": [],
                "best_in_stage": [],
            },
        )
        stats["episodes"] += 1
        stats["turns"] += len(rows)
        stats["recall_events_logged"] += len(record.events_of(RecallEvent))
        other = store.session(paired, record.user_id, record.index) if paired else None
        mine, theirs = agent_prompt_tokens(record), other and agent_prompt_tokens(other)
        other_moves = [e.move for e in other.events_of(RewardEvent)] if other else []
        moves = [e.move for e in record.events_of(RewardEvent)]
        calls = [u for u in record.usage if u.role == "agent"]
        stats["agent_calls"] += len(calls)
        stats["agent_calls_cached"] += sum(u.cached for u in calls)
        if other is not None:
            stats[f"episodes_same_moves_as_{paired}"] += moves == other_moves
        for row in rows:
            stats["turns_with_same_env_experience"] += row["best_any_stage"] is not None
            stats["turns_with_candidate_in_stage"] += bool(row["in_stage"])
            stats["turns_retrieved"] += bool(row["retrieved"])
            stats[f"turns_retrieved_at_{PAPER_SIMILARITY:g}"] += any(
                v >= PAPER_SIMILARITY for v in row["in_stage"].values()
            )
            if row["best_any_stage"] is not None:
                stats["best_any_stage"].append(row["best_any_stage"])
            if row["in_stage"]:
                stats["best_in_stage"].append(max(row["in_stage"].values()))
            if row["retrieved"] or row["recall_logged"]:
                k = row["turn"] - 1
                same_before = other_moves[:k] == moves[:k]
                hit = {
                    "session": f"{record.user_id}/{record.index} ({record.split})",
                    "round": stats["round"],
                    **{key: row[key] for key in ("turn", "stage", "in_stage", "retrieved")},
                    "recall_logged": row["recall_logged"],
                    "move": row["move"],
                    "reward": record.scores.get("reward"),
                }
                if other is not None:
                    hit[f"{paired}_move"] = other_moves[k] if k < len(other_moves) else None
                    hit[f"{paired}_same_history"] = same_before
                    hit[f"{paired}_reward"] = other.scores.get("reward")
                    if mine and theirs and k < min(len(mine), len(theirs)) and same_before:
                        hit["prompt_tokens_over_" + paired] = mine[k] - theirs[k]
                hits.append(hit)
    for stats in per_round.values():
        for key in ("best_any_stage", "best_in_stage"):
            values = stats.pop(key)
            stats[key + "_max"] = max(values) if values else None
            stats[key + "_median"] = round(float(np.median(values)), 3) if values else None
    settings = EvolutionSettings(prune_every=options.prune_every)
    evolution = [operators(found[r + 1], seed, settings) for r in range(rounds) if r + 1 in found]
    expected = sum(e["expected_firings"] for e in evolution)
    none_fire = 1.0
    for e in evolution:
        for k, p in probabilities(settings).items():
            none_fire *= (1 - p) ** e["eligible"][k]
    return {
        "condition": condition,
        "embedder": encoder.name,
        "backend": getattr(encoder, "backend", None),
        "threshold": threshold,
        "rounds": [per_round[r] for r in sorted(per_round)],
        "retrieving_turns": hits,
        "evolution": evolution,
        "operators": {
            "probabilities": probabilities(settings),
            "expected_firings_total": round(expected, 4),
            "p_no_firing": round(none_fire, 4),
        },
    }


def scripted_run(run_dir: Path) -> None:
    """A small gym run on the scripted model: none and prime, two gyms, five rounds."""
    config = ExperimentConfig(
        benchmark="gym",
        memory=["none", "prime"],
        users=1,
        seed=0,
        run_dir=run_dir,
        models={"all": "scripted/auto"},
        cache=False,
        options={
            "env": "telepathy,turtle",
            "difficulty": "easy",
            "train_episodes": 5,
            "eval_episodes": 2,
        },
        memory_options={"prime": {"embedder": "hashing"}},
    )
    play(config, progress=False)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("run_dir", type=Path, nargs="?", help="default: a scripted run")
    parser.add_argument("--embedder", default=None, help="default: the run's option")
    parser.add_argument("--paired", default="none", help="condition to pair with ('' for none)")
    args = parser.parse_args()
    if args.run_dir is None:
        with tempfile.TemporaryDirectory() as tmp:
            args.run_dir = Path(tmp) / "scripted"
            scripted_run(args.run_dir)
            report(args)
        return
    report(args)


def report(args: argparse.Namespace) -> None:
    """Print the statistics of every PRIME condition of ``args.run_dir``."""
    with RunStore.open_readonly(args.run_dir) as store:
        prime = [c.name for c in store.run().conditions if c.memory == "prime"]
        paired = args.paired if args.paired in store.conditions() else ""
        out = [condition_stats(store, name, paired, args.embedder) for name in prime]
    print(json.dumps({"run_dir": args.run_dir.name, "conditions": out}, indent=2))


if __name__ == "__main__":
    main()
