"""The public PRefine release as MPT users, built into instances by the release's own rules.

A release directory holds a dataset config (``configs/datasets/<id>.json``) naming the source
examples, the query, preference and schema configs (each input with its byte size and sha256),
the turn types, the difficulties and the expected instance counts. For every source example and
every (turn, difficulty) the release builds zero or more instances:

- easy (recall): each example-level ``api_calls`` entry of a domain with a single-turn query,
  restricted to the domain's preference slots (``pref_list``);
- medium (induction): for each ``api_calls_pref`` group, the evidence domains, with every value
  the group's rules give for that (domain, slot);
- hard (transfer): for each ``api_calls_pref`` group, the domains the group's rules cover but
  the evidence does not.

The gold calls are the product of the allowed values of every slot. Multi-turn instances take
the domain's template whose targets share the most preference slots (first on a tie); its call
adds the slots the dialogue states. Call strings are parsed with `ast`, never evaluated.
"""

from __future__ import annotations

import hashlib
import itertools
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ._loader import CallParseError, parse_call
from ._release_layout import (
    ReleaseLayoutError,
    check_config,
    check_inputs,
    check_rows,
    expect,
    key,
    read_json,
)

TURNS = {"singleturn": "single-turn", "multiturn": "multi-turn"}
"""The release's turn types and our query-type labels."""
DIFFICULTIES = {"easy": "recall", "medium": "induction", "hard": "transfer"}
"""The release's difficulties and our challenge labels."""


@dataclass
class ReleaseInputs:
    """Everything the builder reads, and what checking it found."""

    dataset_id: str
    config: dict[str, Any]
    rows: list[dict[str, Any]]
    query_single: dict[str, str]
    query_multi: dict[str, list[dict[str, Any]]]
    pref_list: dict[str, list[str]]
    pref_groups: dict[str, dict[str, Any]]
    schemas: dict[str, list[dict[str, Any]]]
    notes: list[str] = field(default_factory=list)
    source_replaced: bool = False
    verified: bool = True


def _checked(root: Path, spec: dict[str, Any], what: str, notes: list[str]) -> tuple[Any, bool]:
    path = root / str(key(spec, "path", what))
    value, payload = read_json(path, what)
    size, sha = spec.get("expected_bytes"), spec.get("expected_sha256")
    actual = hashlib.sha256(payload).hexdigest()
    if (size is not None and size != len(payload)) or (sha is not None and sha != actual):
        notes.append(
            f"{what}: bytes/sha256 differ from the config "
            f"({len(payload)} / {actual[:12]} vs {size} / {str(sha)[:12]})"
        )
        return value, False
    return value, True


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def group_templates(raw: Any) -> dict[str, list[dict[str, Any]]]:
    """Multi-turn templates by domain (a dict of lists, or a list whose targets name it)."""
    if isinstance(raw, dict):
        return {
            str(d): [t for t in (v if isinstance(v, list) else [v]) if isinstance(t, dict)]
            for d, v in raw.items()
        }
    grouped: dict[str, list[dict[str, Any]]] = {}
    for template in raw if isinstance(raw, list) else []:
        if not isinstance(template, dict):
            continue
        targets = [t for t in _list(template.get("target")) if isinstance(t, dict)]
        domain = next((str(t["domain"]) for t in targets if t.get("domain")), "")
        if not domain and _list(template.get("api_call")):
            domain = str(template["api_call"][0]).split("(", 1)[0].strip()
        if domain:
            grouped.setdefault(domain, []).append(template)
    return grouped


def read_release(
    root: str | Path, dataset: str = "mix600-v1", data: str | Path | None = None
) -> ReleaseInputs:
    """Read and check a release directory.

    Raises:
        ReleaseLayoutError: a file is missing, is not JSON, or lacks a key the layout needs.
    """
    root = Path(root)
    config, _ = read_json(root / "configs" / "datasets" / f"{dataset}.json", "dataset config")
    notes: list[str] = []
    inputs: dict[str, Any] = {}
    verified = True
    for part, names in (
        ("queries_config", ("singleturn", "multiturn")),
        ("preferences_config", ("pref_list", "pref_group")),
        ("schemas_config", ("singleturn", "multiturn")),
    ):
        sub, _ = read_json(root / str(key(config, part, "dataset config")), part)
        specs = key(sub, "inputs", part)
        for name in names:
            value, ok = _checked(root, key(specs, name, part), f"{part}.{name}", notes)
            inputs[f"{part}.{name}"] = value
            verified &= ok
    source = key(config, "source", "dataset config")
    expect(source, dict, "the dataset config's 'source'")
    check_config(config, {"turns": TURNS, "difficulties": DIFFICULTIES})
    check_inputs(inputs)
    replaced = False
    if data is not None:
        rows, payload = read_json(Path(data), "data file")
        # The release's own config points outside the checkout (../experiments4/...), so the
        # source usually comes through --data; when its bytes are the config's, it is checked.
        if hashlib.sha256(payload).hexdigest() != source.get("expected_sha256"):
            replaced = True
            notes.append(
                f"source replaced by {Path(data).name}: its sha256 and counts are not checked"
            )
    else:
        spec = {**source, "path": key(source, "default_path", "dataset source")}
        rows, ok = _checked(root, spec, "source data", notes)
        verified &= ok
    check_rows(rows)
    return ReleaseInputs(
        dataset_id=str(config.get("dataset_id", dataset)),
        config=config,
        rows=rows,
        query_single=inputs["queries_config.singleturn"],
        query_multi=group_templates(inputs["queries_config.multiturn"]),
        pref_list=inputs["preferences_config.pref_list"],
        pref_groups=inputs["preferences_config.pref_group"],
        schemas={
            "singleturn": inputs["schemas_config.singleturn"],
            "multiturn": inputs["schemas_config.multiturn"],
        },
        notes=notes,
        source_replaced=replaced,
        verified=verified,
    )


def _text(value: Any) -> str:
    """A value as the release writes it (``True`` / ``False`` for booleans)."""
    if isinstance(value, bool):
        return "True" if value else "False"
    return str(value)


def _call(text: Any, errors: list[str]) -> dict[str, Any] | None:
    """A parsed call string, or None with the problem appended to ``errors``."""
    try:
        return parse_call(str(text))
    except CallParseError as exc:
        errors.append(str(exc))
        return None


SlotMap = tuple[str, dict[str, list[str]]]


def easy_slots(
    example: dict[str, Any],
    pref_list: dict[str, list[str]],
    available: set[str],
    errors: list[str],
) -> list[SlotMap]:
    """Recall: the example's calls, restricted to preference slots."""
    out: list[SlotMap] = []
    for text in example.get("api_calls", []) or []:
        call = _call(text, errors)
        if call is None or call["name"] not in available or call["name"] not in pref_list:
            continue
        slots = {
            s: [_text(v)] for s, v in call["arguments"].items() if s in pref_list[call["name"]]
        }
        if slots:
            out.append((call["name"], slots))
    return out


def _rules(group: dict[str, Any]) -> list[dict[str, Any]]:
    return [r for r in group.get("rules", []) if isinstance(r, dict)]


def medium_slots(
    example: dict[str, Any], groups: dict[str, Any], available: set[str]
) -> list[SlotMap]:
    """Induction: each group's evidence domains, with every value the group allows there."""
    out: list[SlotMap] = []
    for pref in example.get("api_calls_pref", []) or []:
        group = groups.get(str(pref.get("value_group"))) if isinstance(pref, dict) else None
        if not group:
            continue
        by_domain: dict[str, dict[str, set[str]]] = {}
        for ev in pref.get("evidence", []):
            domain, slot = ev.get("domain"), ev.get("slot")
            if not domain or not slot or domain not in available:
                continue
            values = {
                _text(r.get("value"))
                for r in _rules(group)
                if r.get("domain") == domain and r.get("slot") == slot
            }
            if values:
                by_domain.setdefault(str(domain), {}).setdefault(str(slot), set()).update(values)
        out += [(d, {s: sorted(v) for s, v in slots.items()}) for d, slots in by_domain.items()]
    return out


def hard_slots(
    example: dict[str, Any], groups: dict[str, Any], available: set[str]
) -> list[SlotMap]:
    """Transfer: the domains a group's rules cover where the example shows no evidence."""
    out: list[SlotMap] = []
    for pref in example.get("api_calls_pref", []) or []:
        group = groups.get(str(pref.get("value_group"))) if isinstance(pref, dict) else None
        if not group:
            continue
        used = {ev.get("domain") for ev in pref.get("evidence", []) if ev.get("domain")}
        domains = sorted(
            {str(r["domain"]) for r in _rules(group) if r.get("domain") in available} - used
        )
        for domain in domains:
            slots: dict[str, list[str]] = {}
            for r in _rules(group):
                if r.get("domain") != domain or not r.get("slot") or r.get("value") is None:
                    continue
                values = slots.setdefault(str(r["slot"]), [])
                if _text(r["value"]) not in values:
                    values.append(_text(r["value"]))
            if slots:
                out.append((domain, slots))
    return out


def gold_calls(
    domain: str, slots: dict[str, list[str]], base: dict[str, Any]
) -> list[dict[str, Any]]:
    """Every gold call: the product of the allowed values of the slots, over ``base``."""
    names = sorted(slots)
    return [
        {"name": domain, "arguments": {**base, **dict(zip(names, combo, strict=True))}}
        for combo in itertools.product(*(slots[n] for n in names))
    ]


def _template(templates: list[dict[str, Any]], slots: set[str]) -> dict[str, Any] | None:
    if not templates:
        return None
    best, best_score = None, 0
    for t in templates:
        score = len(slots & {str(x["slot"]) for x in t.get("target", []) if x.get("slot")})
        if score > best_score:
            best, best_score = t, score
    return best or templates[0]


def _dialogue(turns: list[dict[str, Any]]) -> list[dict[str, str]]:
    return [
        {
            "role": "user" if str(t.get("role", "")).lower() == "user" else "assistant",
            "text": str(t.get("message", "")),
        }
        for t in turns
    ]


def build_instances(
    inputs: ReleaseInputs, example: dict[str, Any], turn: str, difficulty: str
) -> tuple[list[dict[str, Any]], list[str]]:
    """One example's instances for one (turn, difficulty), and the problems met."""
    errors: list[str] = []
    available = set(inputs.query_single if turn == "singleturn" else inputs.query_multi)
    if difficulty == "easy":
        maps = easy_slots(example, inputs.pref_list, available, errors)
    elif difficulty == "medium":
        maps = medium_slots(example, inputs.pref_groups, available)
    else:
        maps = hard_slots(example, inputs.pref_groups, available)
    instances = []
    for domain, slots in maps:
        if turn == "singleturn":
            dialogue = [{"role": "user", "text": inputs.query_single[domain]}]
            base: dict[str, Any] = {}
        else:
            template = _template(inputs.query_multi.get(domain, []), set(slots))
            if template is None:
                continue
            dialogue = _dialogue(template.get("query", []))
            calls = template.get("api_call") or [""]
            parsed = _call(calls[0], errors) if calls[0] else None
            base = {k: _text(v) for k, v in (parsed or {"arguments": {}})["arguments"].items()}
        allowed: dict[str, list[str]] = {k: [str(v)] for k, v in base.items()}
        allowed.update(slots)
        instances.append(
            {
                "domain": domain,
                "dialogue": dialogue,
                "allowed": allowed,
                "gold_calls": gold_calls(domain, slots, base),
            }
        )
    return instances, errors


def _sessions(example: dict[str, Any], errors: list[str]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for raw in example.get("sessions", []):
        calls = [c for c in (_call(t, errors) for t in raw.get("api_call", []) or []) if c]
        utterances = raw.get("preference_utterance") or []
        out.append(
            {
                "index": len(out),
                "domain": calls[0]["name"] if calls else "chat",
                "dialogue_id": raw.get("dialogue_id", ""),
                "dialogue": _dialogue(raw.get("dialogue", [])),
                "calls": calls,
                "call": calls[0] if calls else {"name": "", "arguments": {}},
                "result": "status=executed",
                "revealed": {},
                "stated": [],
                "preference_utterance": " ".join(map(str, utterances))
                if isinstance(utterances, list)
                else str(utterances),
            }
        )
    return out


def _functions(schema: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [s.get("function", s) for s in schema if isinstance(s, dict)]


def _check_schema(functions: dict[str, Any], domain: str, turn: str, example: Any) -> None:
    """An instance's function is among the turn type's schema (its session shows it)."""
    if domain not in functions:
        raise ReleaseLayoutError(
            f"release layout: schemas_config.{turn} has no function '{domain}', which "
            f"example {example}'s {turn} instances call"
        )


def release_users(inputs: ReleaseInputs) -> list[dict[str, Any]]:
    """User plans (one per source example): history sessions and labelled instances."""
    turns = [t for t in inputs.config.get("turns", list(TURNS)) if t in TURNS]
    levels = [d for d in inputs.config.get("difficulties", list(DIFFICULTIES)) if d in DIFFICULTIES]
    users: list[dict[str, Any]] = []
    for example in inputs.rows:
        errors: list[str] = []
        history = _sessions(example, errors)
        instances: list[dict[str, Any]] = []
        for turn in turns:
            functions = _functions(inputs.schemas[turn])
            pref_map = {
                f["name"]: list(inputs.pref_list.get(f["name"], []))
                for f in functions
                if "name" in f
            }
            for level in levels:
                built, problems = build_instances(inputs, example, turn, level)
                errors += [p for p in problems if p not in errors]
                for item in built:
                    _check_schema(pref_map, item["domain"], turn, example["example_id"])
                    gold = item["gold_calls"][0]
                    instances.append(
                        {
                            "id": f"{example['example_id']}:{turn}:{level}:{len(instances)}",
                            "source": "release",
                            "challenge": DIFFICULTIES[level],
                            "difficulty": level,
                            "query_type": TURNS[turn],
                            "domain": item["domain"],
                            "variant": False,
                            "focal_group": "",
                            "dialogue": item["dialogue"],
                            "gold": gold,
                            "gold_calls": item["gold_calls"],
                            "allowed": item["allowed"],
                            "pref_slots": sorted(
                                s for s in item["allowed"] if s in pref_map.get(item["domain"], [])
                            ),
                            "focal_slots": [],
                            "open_slots": [],
                            "pref_map": pref_map,
                            "functions": functions,
                            "notes": [*inputs.notes, *errors],
                        }
                    )
        users.append(
            {
                "id": f"mpt-{example['example_id']}",
                "prefs": {},
                "drift": None,
                "history": history,
                "instances": instances,
                "errors": errors,
            }
        )
    return users


def scenario_counts(users: list[dict[str, Any]]) -> dict[str, int]:
    """Instances per ``turn.difficulty`` scenario, in the release's names."""
    names = {v: k for k, v in TURNS.items()}
    counts: dict[str, int] = {}
    for user in users:
        for inst in user["instances"]:
            key = f"{names[inst['query_type']]}.{inst['difficulty']}"
            counts[key] = counts.get(key, 0) + 1
    return counts


def check_expected(inputs: ReleaseInputs, users: list[dict[str, Any]]) -> list[str]:
    """Differences between the built counts and the config's ``expected`` (empty: equal)."""
    expected = inputs.config.get("expected", {})
    counts = scenario_counts(users)
    problems = []
    if expected.get("source_example_count") not in (None, len(inputs.rows)):
        problems.append(f"examples: {len(inputs.rows)} != {expected['source_example_count']}")
    for name, spec in expected.get("scenarios", {}).items():
        if counts.get(name, 0) != spec.get("count"):
            problems.append(f"{name}: {counts.get(name, 0)} != {spec.get('count')}")
    total = sum(counts.values())
    if expected.get("total_instances") not in (None, total):
        problems.append(f"total: {total} != {expected['total_instances']}")
    return problems


def load_release(
    root: str | Path, dataset: str = "mix600-v1", data: str | Path | None = None
) -> list[dict[str, Any]]:
    """User plans from a release directory; on the release's own source file the instance
    counts must equal the config's ``expected``.

    Raises:
        ReleaseLayoutError: not the release's layout, or the counts differ from ``expected``.
    """
    inputs = read_release(root, dataset, data)
    users = release_users(inputs)
    if not inputs.source_replaced and inputs.verified:
        problems = check_expected(inputs, users)
        if problems:
            raise ReleaseLayoutError("release counts differ from expected: " + "; ".join(problems))
    return users
