"""The release's layout, checked before anything is built: every file the builder reads holds
the JSON types it reads there, so a file in another layout stops with one line naming the file
and the entry (a run never starts on values coerced to text, nor fails session by session).
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from pathlib import Path
from typing import Any

from rapport._json import RepeatedKeyError, loads_strict


class ReleaseLayoutError(ValueError):
    """A directory or file that is not in the release's layout (one line says what is missing)."""


def read_json(path: Path, what: str) -> tuple[Any, bytes]:
    """A JSON file's value and its bytes.

    Raises:
        ReleaseLayoutError: missing, unreadable, not JSON, or an object repeats a key.
    """
    if not path.is_file():
        raise ReleaseLayoutError(f"release layout: missing {what} ({path})")
    try:
        payload = path.read_bytes()
        return loads_strict(payload.decode("utf-8-sig")), payload
    except OSError as exc:
        raise ReleaseLayoutError(f"release layout: cannot read {what} ({path}: {exc})") from exc
    except RepeatedKeyError as exc:
        raise ReleaseLayoutError(
            f"release layout: {what} repeats the key '{exc.key}' in one object ({path})"
        ) from exc
    # ValueError: also JSON's decode error and an integer of more digits than Python reads.
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise ReleaseLayoutError(f"release layout: {what} is not JSON ({path}: {exc})") from exc


_JSON_NAMES = {
    "dict": "object",
    "list": "list",
    "str": "string",
    "dict or list": "object or list",
    "str or int": "string or integer",
    "str or int or float or bool": "string, number or boolean",
}


def expect(value: Any, kind: type | tuple[type, ...], what: str) -> None:
    """Refuse a value not of `kind` (a boolean is never an integer here).

    Raises:
        ReleaseLayoutError: naming `what` and the type found.
    """
    kinds = kind if isinstance(kind, tuple) else (kind,)
    if not isinstance(value, kinds) or (isinstance(value, bool) and bool not in kinds):
        names = " or ".join(k.__name__ for k in kinds)
        raise ReleaseLayoutError(
            f"release layout: {what} must be a JSON {_JSON_NAMES.get(names, names)}, "
            f"not {type(value).__name__}"
        )


def key(mapping: Any, name: str, what: str) -> Any:
    """``mapping[name]``.

    Raises:
        ReleaseLayoutError: not an object, or no such key.
    """
    if not isinstance(mapping, dict) or name not in mapping:
        raise ReleaseLayoutError(f"release layout: {what} has no '{name}'")
    return mapping[name]


def _texts(value: Any, what: str) -> None:
    expect(value, list, what)
    for n, item in enumerate(value):
        expect(item, str, f"{what} entry {n}")


def _text_keys(item: dict[str, Any], names: tuple[str, ...], where: str) -> None:
    """Each of `names` the object holds is a string."""
    for name in names:
        if name in item:
            expect(item[name], str, f"{where} '{name}'")


def check_config(config: dict[str, Any], known: Mapping[str, Collection[str]]) -> None:
    """The dataset config's optional keys, where present, have the layout's types; its
    ``turns`` and ``difficulties`` name only `known` ones (another name would silently build
    nothing)."""
    if "dataset_id" in config:
        expect(config["dataset_id"], str, "the dataset config's 'dataset_id'")
    for name, names in known.items():
        if name not in config:
            continue
        _texts(config[name], f"the dataset config's '{name}'")
        unknown = [v for v in config[name] if v not in names]
        if unknown:
            raise ReleaseLayoutError(
                f"release layout: the dataset config's '{name}' names '{unknown[0]}' "
                f"(known: {', '.join(names)})"
            )
    expected = config.get("expected", {})
    expect(expected, dict, "the dataset config's 'expected'")
    scenarios = expected.get("scenarios", {})
    expect(scenarios, dict, "the dataset config's 'expected.scenarios'")
    for name, spec in scenarios.items():
        expect(spec, dict, f"the dataset config's 'expected.scenarios.{name}'")


def check_inputs(inputs: dict[str, Any]) -> None:
    """Each input file holds the top-level type the builder reads, and the types it reads
    inside."""
    kinds: dict[str, type | tuple[type, ...]] = {
        "queries_config.singleturn": dict,
        "queries_config.multiturn": (dict, list),
        "preferences_config.pref_list": dict,
        "preferences_config.pref_group": dict,
        "schemas_config.singleturn": list,
        "schemas_config.multiturn": list,
    }
    for name, kind in kinds.items():
        expect(inputs[name], kind, name)
    for domain, query in inputs["queries_config.singleturn"].items():
        expect(query, str, f"queries_config.singleturn's '{domain}'")
    _check_templates(inputs["queries_config.multiturn"])
    for domain, slots in inputs["preferences_config.pref_list"].items():
        _texts(slots, f"preferences_config.pref_list's '{domain}'")
    for group, spec in inputs["preferences_config.pref_group"].items():
        _check_group(spec, f"preferences_config.pref_group's '{group}'")
    for turn in ("singleturn", "multiturn"):
        for n, entry in enumerate(inputs[f"schemas_config.{turn}"]):
            _check_function(entry, f"schemas_config.{turn} entry {n}")


def _check_templates(raw: dict[str, Any] | list[Any]) -> None:
    if isinstance(raw, dict):
        entries = [
            (f"'{d}' template {n}", t)
            for d, v in raw.items()
            for n, t in enumerate(v if isinstance(v, list) else [v])
        ]
    else:
        entries = [(f"template {n}", t) for n, t in enumerate(raw)]
    for name, template in entries:
        where = f"queries_config.multiturn's {name}"
        expect(template, dict, where)
        _check_turns(template, where)
        expect(template.get("query", []), list, f"{where} 'query'")


def _check_group(spec: Any, where: str) -> None:
    expect(spec, dict, where)
    expect(spec.get("rules", []), list, f"{where}.rules")
    for n, rule in enumerate(spec.get("rules", [])):
        expect(rule, dict, f"{where}.rules entry {n}")
        _text_keys(rule, ("domain", "slot"), f"{where}.rules entry {n}")
        if rule.get("value") is not None:
            expect(rule["value"], (str, int, float, bool), f"{where}.rules entry {n} 'value'")


def _check_function(entry: Any, where: str) -> None:
    """An OpenAI-style function (``{"function": {...}}`` or the function itself)."""
    expect(entry, dict, where)
    function = entry.get("function", entry)
    expect(function, dict, f"{where} 'function'")
    if not isinstance(function.get("name"), str) or not function["name"].strip():
        raise ReleaseLayoutError(f"release layout: {where} has no function 'name' string")
    _text_keys(function, ("description",), where)
    parameters = function.get("parameters", {})
    expect(parameters, dict, f"{where} 'parameters'")
    properties = parameters.get("properties", {})
    expect(properties, dict, f"{where} 'parameters.properties'")
    for name, spec in properties.items():
        expect(spec, dict, f"{where} parameter '{name}'")
        if "enum" in spec:
            expect(spec["enum"], list, f"{where} parameter '{name}' 'enum'")
    if "required" in parameters:
        _texts(parameters["required"], f"{where} 'parameters.required'")


def check_rows(rows: Any) -> None:
    """A non-empty list of examples, each with a unique id, a list of sessions and, where
    the builder reads them, lists of call strings and objects with text."""
    if not isinstance(rows, list) or not all(isinstance(r, dict) for r in rows):
        raise ReleaseLayoutError("release layout: the data file is not a JSON list of examples")
    if not rows:
        raise ReleaseLayoutError("release layout: the data file holds no examples")
    seen: set[str] = set()
    for i, row in enumerate(rows):
        missing = [k for k in ("example_id", "sessions") if k not in row]
        if missing:
            raise ReleaseLayoutError(
                f"release layout: example {i} of the data file has no "
                + " and no ".join(f"'{k}'" for k in missing)
            )
        where = f"example {i} of the data file"
        expect(row["example_id"], (str, int), f"{where}'s 'example_id'")
        if not str(row["example_id"]).strip():
            raise ReleaseLayoutError(f"release layout: {where}'s 'example_id' is empty")
        if str(row["example_id"]) in seen:
            raise ReleaseLayoutError(
                f"release layout: {where} repeats example_id {row['example_id']!r}"
            )
        seen.add(str(row["example_id"]))
        for name in ("sessions", "api_calls", "api_calls_pref"):
            if row.get(name) is not None or name == "sessions":
                expect(row[name], list, f"{where}'s '{name}'")
        for n, session in enumerate(row["sessions"]):
            _check_session(session, f"{where}'s session {n}")
        for n, call in enumerate(row.get("api_calls") or []):
            expect(call, str, f"{where}'s api_calls entry {n}")
        for n, pref in enumerate(row.get("api_calls_pref") or []):
            _check_pref(pref, f"{where}'s api_calls_pref {n}")


def _check_session(session: Any, where: str) -> None:
    expect(session, dict, where)
    _check_turns(session, where)
    if session.get("dialogue_id") is not None:
        expect(session["dialogue_id"], (str, int), f"{where} 'dialogue_id'")
    utterances = session.get("preference_utterance")
    if isinstance(utterances, list):
        _texts(utterances, f"{where} 'preference_utterance'")
    elif utterances is not None:
        expect(utterances, str, f"{where} 'preference_utterance'")


def _check_pref(pref: Any, where: str) -> None:
    expect(pref, dict, where)
    _text_keys(pref, ("value_group",), where)
    expect(pref.get("evidence", []), list, f"{where} 'evidence'")
    for m, evidence in enumerate(pref.get("evidence", [])):
        expect(evidence, dict, f"{where} evidence {m}")
        _text_keys(evidence, ("domain", "slot"), f"{where} evidence {m}")


def _check_turns(item: dict[str, Any], where: str) -> None:
    """A session's or template's ``api_call`` is a list of call strings, and its dialogue
    (``query`` in a template) and targets lists of objects with text where text is read."""
    if item.get("api_call") is not None:
        expect(item["api_call"], list, f"{where} 'api_call'")
        for n, call in enumerate(item["api_call"]):
            expect(call, str, f"{where} 'api_call' entry {n}")
    texts = {"dialogue": ("role", "message"), "query": ("role", "message")}
    for name in ("dialogue", "query", "target"):
        if isinstance(item.get(name), list):
            for n, turn in enumerate(item[name]):
                expect(turn, dict, f"{where} '{name}' entry {n}")
                _text_keys(turn, texts.get(name, ("domain", "slot")), f"{where} '{name}' entry {n}")
        elif item.get(name) is not None and name != "query":
            expect(item[name], list, f"{where} '{name}'")
