"""The seeded generator of MPT-style users: latent preferences, history sessions, eval instances.

Everything is plain JSON data built from one `random.Random` per user, so the same seed gives
the same bytes. A history session reveals a preference when its executed call sets an argument
of that preference's group; evaluation instances are labelled by how the evidence relates to
the target domain (recall, induction, transfer) and by query type (context-guided, -free).
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from ._dialogue import history_dialogue, query_dialogue, required_values
from ._schema import ApiSchema, domain_schema, domains, has_variant, load_data

CHALLENGES = ("recall", "induction", "transfer")
QUERY_TYPES = ("context-guided", "context-free")


@dataclass(frozen=True)
class GenerationSettings:
    """Knobs of the generator."""

    sessions_min: int = 5
    sessions_max: int = 10
    drift: float = 0.2
    """Share of users who reverse one preference part-way through their history."""
    reveal: float = 0.7
    """Chance that a session shows an applicable preference in its call."""
    stated: float = 0.3
    """Chance that a shown preference is also said outright (else only implied)."""
    no_evidence: float = 0.15
    """Chance that a session is drawn from a domain where the user holds no preference."""
    per_cell: int = 1
    """Eval instances per challenge x query type."""
    challenges: tuple[str, ...] = CHALLENGES
    """The challenges that get eval instances (a subset of `CHALLENGES`)."""


@lru_cache(maxsize=256)
def group_slots(group: str, option: str) -> dict[str, dict[str, Any]]:
    """Domain -> {argument: value} that a preference option sets (shared: do not mutate)."""
    out: dict[str, dict[str, Any]] = {}
    for key, value in load_data()["groups"][group]["options"][option]["values"].items():
        domain, arg = key.split(".")
        out.setdefault(domain, {})[arg] = value
    return out


def preference_args(domain: str, schema: ApiSchema) -> list[str]:
    """The arguments of a domain's API that some preference option sets (its preference
    slots, in the schema's own names)."""
    args = {
        arg
        for group in load_data()["groups"].values()
        for option in group["options"].values()
        for key in option["values"]
        for d, arg in [key.split(".")]
        if d == domain
    }
    return sorted(schema.local_arg(a) for a in args)


def generate_users(n: int, seed: int, settings: GenerationSettings | None = None) -> list[dict]:
    """``n`` users; user ``i`` depends only on ``(seed, i)``."""
    settings = settings or GenerationSettings()
    return [generate_user(i, seed, settings) for i in range(n)]


def generate_user(index: int, seed: int, settings: GenerationSettings) -> dict[str, Any]:
    """One user with preferences, history sessions and evaluation instances."""
    rng = random.Random(f"mpt:{seed}:{index}")
    prefs = _draw_prefs(rng)
    n = rng.randint(settings.sessions_min, settings.sessions_max)
    drift = _draw_drift(rng, prefs, n) if rng.random() < settings.drift else None
    plan = _plan_history(rng, prefs, drift, n, settings)
    if drift is not None and not _drift_shown(plan, drift):
        drift = None
        plan = _plan_history(rng, prefs, None, n, settings)
    history = [_history_session(rng, i, s) for i, s in enumerate(plan)]
    user_id = f"mpt-{seed}-{index}"
    instances = _instances(rng, user_id, prefs, plan, settings)
    return {
        "id": user_id,
        "prefs": prefs,
        "drift": drift,
        "history": history,
        "instances": instances,
    }


def _draw_prefs(rng: random.Random) -> dict[str, str]:
    groups = load_data()["groups"]
    chosen = rng.sample(sorted(groups), rng.randint(2, 4))
    return {g: rng.choice(sorted(groups[g]["options"])) for g in sorted(chosen)}


def _draw_drift(rng: random.Random, prefs: dict[str, str], n: int) -> dict[str, Any] | None:
    groups = load_data()["groups"]
    movable = [g for g in prefs if len(groups[g]["options"]) > 1]
    if not movable:
        return None
    group = rng.choice(movable)
    before = rng.choice([o for o in sorted(groups[group]["options"]) if o != prefs[group]])
    return {"group": group, "before": before, "after": prefs[group], "at": n // 2}


def _applicable(prefs: dict[str, str]) -> dict[str, list[str]]:
    """Domain -> the user's groups that have an argument there."""
    out: dict[str, list[str]] = {}
    for group, option in prefs.items():
        for domain in group_slots(group, option):
            out.setdefault(domain, []).append(group)
    return out


def _plan_history(
    rng: random.Random,
    prefs: dict[str, str],
    drift: dict[str, Any] | None,
    n: int,
    settings: GenerationSettings,
) -> list[dict[str, Any]]:
    applicable = _applicable(prefs)
    usable = sorted(applicable)
    holdout = set(rng.sample(usable, min(2, max(0, len(usable) - 2))))
    seen_pool = [d for d in usable if d not in holdout]
    quiet_pool = [d for d in domains() if d not in applicable]
    plan = []
    for i in range(n):
        quiet = quiet_pool and (not seen_pool or rng.random() < settings.no_evidence)
        domain = rng.choice(quiet_pool if quiet else seen_pool)
        revealed: dict[str, str] = {}
        for group in applicable.get(domain, []):
            option = _option_at(group, prefs, drift, i)
            if rng.random() < settings.reveal and domain in group_slots(group, option):
                revealed[group] = option
        stated = sorted(g for g in revealed if rng.random() < settings.stated)
        reserved = sorted(
            a for g in applicable.get(domain, []) for a in group_slots(g, prefs[g])[domain]
        )
        plan.append(
            {"domain": domain, "revealed": revealed, "stated": stated, "reserved": reserved}
        )
    return plan


def _option_at(group: str, prefs: dict[str, str], drift: dict[str, Any] | None, i: int) -> str:
    if drift is not None and drift["group"] == group and i < drift["at"]:
        return str(drift["before"])
    return prefs[group]


def _drift_shown(plan: list[dict[str, Any]], drift: dict[str, Any]) -> bool:
    shown = [i for i, s in enumerate(plan) if drift["group"] in s["revealed"]]
    return any(i < drift["at"] for i in shown) and any(i >= drift["at"] for i in shown)


def _history_session(rng: random.Random, index: int, planned: dict[str, Any]) -> dict[str, Any]:
    schema = domain_schema(planned["domain"])
    args = required_values(rng, schema)
    for group, option in planned["revealed"].items():
        args.update(group_slots(group, option)[planned["domain"]])
    ref = _ref(rng)
    dialogue, extra = history_dialogue(rng, schema, args, planned, ref)
    args.update(extra)
    ordered = {a: args[a] for a in schema.args if a in args}
    return {
        "index": index,
        "domain": planned["domain"],
        "revealed": planned["revealed"],
        "stated": planned["stated"],
        "dialogue": dialogue,
        "call": {"name": schema.name, "arguments": ordered},
        "result": f"status=confirmed reference={ref}",
    }


def _ref(rng: random.Random) -> str:
    return "".join(rng.choice("ABCDEFGHJKLMNPQRSTUVWXYZ23456789") for _ in range(6))


def evidence(plan: list[dict[str, Any]], group: str) -> list[tuple[int, str, str]]:
    """(session, domain, option) of every session that revealed a group."""
    return [
        (i, s["domain"], s["revealed"][group]) for i, s in enumerate(plan) if group in s["revealed"]
    ]


def _candidates(prefs: dict[str, str], plan: list[dict[str, Any]]) -> dict[str, list]:
    seen = {s["domain"] for s in plan}
    out: dict[str, list] = {c: [] for c in CHALLENGES}
    for domain, groups in sorted(_applicable(prefs).items()):
        for group in groups:
            shown = [e for e in evidence(plan, group)]
            if not shown or shown[-1][2] != prefs[group]:
                continue  # no evidence, or the latest behaviour is not yet the stable one
            in_domain = [e for e in shown if e[1] == domain]
            if domain not in seen:
                out["transfer"].append((domain, group))
            elif in_domain and in_domain[-1][2] == prefs[group]:
                out["recall"].append((domain, group))
            elif not in_domain:
                out["induction"].append((domain, group))
    return out


def _instances(
    rng: random.Random,
    user_id: str,
    prefs: dict[str, str],
    plan: list[dict[str, Any]],
    settings: GenerationSettings,
) -> list[dict[str, Any]]:
    candidates = _candidates(prefs, plan)
    instances: list[dict[str, Any]] = []
    for query_type in QUERY_TYPES:  # guided cells first, so a cut keeps every challenge
        for challenge in settings.challenges:
            pool = candidates[challenge]
            for _ in range(settings.per_cell if pool else 0):
                domain, group = rng.choice(pool)
                variant = challenge == "transfer" and has_variant(domain) and rng.random() < 0.5
                instances.append(
                    _instance(
                        rng,
                        f"{user_id}-e{len(instances)}",
                        challenge,
                        query_type,
                        domain,
                        group,
                        variant,
                        prefs,
                        plan,
                    )
                )
    return instances


def _instance(
    rng: random.Random,
    instance_id: str,
    challenge: str,
    query_type: str,
    domain: str,
    focal: str,
    variant: bool,
    prefs: dict[str, str],
    plan: list[dict[str, Any]],
) -> dict[str, Any]:
    schema = domain_schema(domain, variant)
    base = domain_schema(domain)
    context = required_values(rng, base)
    gold: dict[str, Any] = {}
    pref_slots: list[str] = []
    focal_slots: list[str] = []
    for group, option in sorted(prefs.items()):
        if not evidence(plan, group) or domain not in group_slots(group, option):
            continue
        for arg, value in group_slots(group, option)[domain].items():
            local = schema.local_arg(arg)
            gold[local] = schema.local_value(arg, value)
            pref_slots.append(local)
            if group == focal:
                focal_slots.append(local)
    local_context = {schema.local_arg(a): v for a, v in context.items()}
    gold.update(local_context)
    open_slots = [] if query_type == "context-guided" else sorted(local_context)
    return {
        "id": instance_id,
        "challenge": challenge,
        "query_type": query_type,
        "domain": domain,
        "variant": variant,
        "focal_group": focal,
        "dialogue": query_dialogue(rng, schema, local_context, query_type),
        "gold": {"name": schema.name, "arguments": {a: gold[a] for a in schema.args if a in gold}},
        "pref_slots": sorted(pref_slots),
        "pref_map": {schema.name: preference_args(domain, schema)},
        "focal_slots": sorted(focal_slots),
        "open_slots": open_slots,
    }
