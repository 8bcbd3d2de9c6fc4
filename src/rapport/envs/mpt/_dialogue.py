"""Templated dialogues of generated sessions and queries (templates are package data)."""

from __future__ import annotations

import random
from collections.abc import Sequence
from functools import lru_cache
from importlib import resources
from typing import Any

import yaml

from ._schema import ApiSchema, ArgSpec, load_data

Utterance = dict[str, str]


@lru_cache(maxsize=1)
def templates() -> dict[str, Any]:
    """The dialogue templates."""
    path = resources.files("rapport.envs.mpt") / "data" / "templates.yaml"
    loaded: dict[str, Any] = yaml.safe_load(path.read_text(encoding="utf-8"))
    return loaded


def pick(rng: random.Random, options: Sequence[Any]) -> Any:
    """A uniform choice (one `random()` draw: faster than `Random.choice`)."""
    return options[int(rng.random() * len(options))]


def _say(rng: random.Random, key: str, **fields: Any) -> str:
    return str(pick(rng, templates()[key])).format(**fields)


def _random_value(rng: random.Random, arg: ArgSpec) -> Any:
    if arg.values:
        return pick(rng, arg.values)
    if arg.kind == "date":
        return f"2026-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}"
    if arg.kind == "time":
        return f"{pick(rng, [12, 13, 18, 19, 20])}:{pick(rng, ['00', '30'])}"
    return pick(rng, templates()["texts"].get(arg.name, ["something nice"]))


def required_values(rng: random.Random, schema: ApiSchema) -> dict[str, Any]:
    """Random values for the schema's required arguments (two cities differ)."""
    out: dict[str, Any] = {}
    for arg in schema.args.values():
        if arg.required:
            value = _random_value(rng, arg)
            while arg.values and value in out.values() and len(arg.values) > 1:
                value = _random_value(rng, arg)
            out[arg.name] = value
    return out


def constraint_text(schema: ApiSchema, values: dict[str, Any]) -> str:
    """Stated constraints in words: ``city San Francisco, date 2026-03-02``."""
    return ", ".join(f"{schema.args[a].description.lower()} {v}" for a, v in values.items())


def _is_flag(arg: ArgSpec) -> bool:
    return set(map(str, arg.values)) == {"True", "False"}


def _ask_and_pick(
    rng: random.Random, arg: ArgSpec, value: Any, statement: str | None
) -> list[Utterance]:
    if _is_flag(arg):
        ask = f"Do you need this: {arg.description.lower()}?"
        answer = "Yes, please." if str(value) == "True" else "No, that's not needed."
    else:
        options = ", ".join(str(v) for v in arg.values)
        ask = _say(rng, "ask_slot", desc=arg.description.lower(), options=options)
        answer = _say(rng, "pick", value=value)
    if statement:
        answer = f"{statement} {answer}"
    return [{"role": "assistant", "text": ask}, {"role": "user", "text": answer}]


def _statement(rng: random.Random, group: str, option: str) -> str:
    return str(pick(rng, load_data()["groups"][group]["options"][option]["says"]))


def history_dialogue(
    rng: random.Random,
    schema: ApiSchema,
    args: dict[str, Any],
    planned: dict[str, Any],
    ref: str,
) -> tuple[list[Utterance], dict[str, Any]]:
    """A booking dialogue whose choices match ``args``; returns it and any noise choices."""
    intent = pick(rng, schema.intents)
    required = {a: args[a] for a in schema.required()}
    turns: list[Utterance] = [
        {"role": "user", "text": _say(rng, "greet", intent=intent)},
        {"role": "assistant", "text": _say(rng, "ask_required")},
        {
            "role": "user",
            "text": _say(rng, "give_required", constraints=constraint_text(schema, required)),
        },
    ]
    slot_group = {a: g for g, o in planned["revealed"].items() for a in _slots(g, o, schema)}
    extra: dict[str, Any] = {}
    for arg in schema.args.values():
        if arg.required or arg.name in planned.get("reserved", ()):
            if arg.name in slot_group:
                group = slot_group[arg.name]
                said = group in planned["stated"]
                statement = _statement(rng, group, planned["revealed"][group]) if said else None
                turns += _ask_and_pick(rng, arg, args[arg.name], statement)
            continue
        if rng.random() < 0.35:
            extra[arg.name] = _random_value(rng, arg)
            turns += _ask_and_pick(rng, arg, extra[arg.name], None)
    turns += _browse(rng)
    summary = ", ".join(f"{a} {v}" for a, v in {**args, **extra}.items())
    turns += [
        {"role": "assistant", "text": _say(rng, "confirm", summary=summary)},
        {"role": "user", "text": _say(rng, "agree")},
        {"role": "assistant", "text": _say(rng, "done", ref=ref)},
        {"role": "user", "text": _say(rng, "bye")},
    ]
    return turns, extra


def _slots(group: str, option: str, schema: ApiSchema) -> list[str]:
    key = schema.domain + "."
    values = load_data()["groups"][group]["options"][option]["values"]
    return [k.removeprefix(key) for k in values if k.startswith(key)]


def _browse(rng: random.Random) -> list[Utterance]:
    t = templates()
    names = [f"{pick(rng, t['names_a'])} {pick(rng, t['names_b'])}" for _ in range(3)]
    items = [
        _say(
            rng,
            "listing_item",
            name=name,
            detail_a=pick(rng, t["details"]),
            detail_b=pick(rng, t["details"]),
            rating=f"{rng.uniform(3.5, 4.9):.1f}",
        )
        for name in names
    ]
    listing = "; ".join(f"{i + 1}) {item}" for i, item in enumerate(items))
    chosen = pick(rng, names)
    fields = {
        "name": chosen,
        "rating": f"{rng.uniform(3.8, 4.9):.1f}",
        "detail_a": pick(rng, t["details"]),
        "detail_b": pick(rng, t["details"]),
        "minutes": 5 + int(rng.random() * 26),
    }
    return [
        {"role": "assistant", "text": _say(rng, "results", count=3, listing=listing)},
        {"role": "user", "text": _say(rng, "follow_up", name=chosen)},
        {"role": "assistant", "text": _say(rng, "follow_answer", **fields)},
        {"role": "user", "text": _say(rng, "choose", name=chosen)},
    ]


def query_dialogue(
    rng: random.Random, schema: ApiSchema, context: dict[str, Any], query_type: str
) -> list[Utterance]:
    """The evaluation query: the request alone, or with its stated constraints."""
    intent = pick(rng, schema.intents)
    if query_type == "context-free":
        text = _say(rng, "query_free", intent=intent, Intent=intent.capitalize())
        return [{"role": "user", "text": text}]
    constraints = constraint_text(schema, context)
    text = _say(
        rng,
        "query_guided",
        intent=intent,
        constraints=constraints,
        Constraints=constraints[:1].upper() + constraints[1:],
    )
    return [{"role": "user", "text": text}]
