"""Score the same MPT predictions with rapport's metrics and PRefine's scorer: prints JSON.

Compared per case: P-EM, OA-F1's (tp, fp, fn) and the preference-slot (tp, fp, fn); then
P-EM and OA-F1 micro over all cases, each scorer's own way.

The cases are ours: a few SGD-style functions with preference slots, and predictions that
are exact, use another allowed value, call the wrong function, add or miss slots, or write a
value another way (case, booleans, quotes, times, dates, numbers). PRefine gets each gold as
its prepared record (one call string per combination of allowed values, as its builder writes
them) and each prediction as the text an agent answers; rapport gets the structured call.
Each differing case names its reason and whether docs/mpt.md's differences table has it.

Run:  python benchmarks/mpt_scorer_agreement.py --prefine PATH_TO_CHECKOUT [--month-dates]
      [--form json|call]

``--prefine`` is a checkout of github.com/er1123090/PRefine: its ``src/exp7/evaluation`` is
imported from there (nothing of it is copied here). ``--month-dates`` scores rapport's side
with ``dates="month_names"`` (option ``month_dates``). ``--form call`` gives PRefine the prediction
as a call string (``GetHotels(average_star="2")``) instead of the JSON answer.
"""

from __future__ import annotations

import argparse
import importlib
import json
import sys
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any, NoReturn

from rapport.envs.mpt import MPTEvalOutcome, instance_scores, micro_f1, normalize
from rapport.envs.mpt._release import gold_calls

PREF_LIST = {
    "GetHotels": ["average_star", "has_wifi", "number_of_rooms"],
    "GetRestaurants": ["cuisine", "has_live_music", "price_range"],
    "GetFlights": ["airlines", "number_stops", "seating_class"],
    "GetRideSharing": ["number_of_seats", "ride_type", "shared_ride"],
    "GetMovies": ["genre", "show_type"],
}
"""Preference slots per function (PRefine's ``pref_list``); GetWeather has none."""

INSTANCES: dict[str, tuple[str, dict[str, str], dict[str, list[str]]]] = {
    "hotel": ("GetHotels", {}, {"average_star": ["2"], "has_wifi": ["True"]}),
    "hotel_trip": (
        "GetHotels",
        {"location": "Vallejo", "check_in_date": "2019-03-05"},
        {"average_star": ["1", "2"], "number_of_rooms": ["1"]},
    ),
    "dinner": ("GetRestaurants", {}, {"cuisine": ["Italian"], "price_range": ["cheap"]}),
    "dinner_trip": (
        "GetRestaurants",
        {"city": "San Jose", "date": "2019-03-07", "time": "18:00"},
        {"price_range": ["moderate", "inexpensive"], "has_live_music": ["False"]},
    ),
    "flight": (
        "GetFlights",
        {"origin_city": "Portland", "destination_city": "Seattle", "departure_date": "2019-03-05"},
        {
            "airlines": ["Delta Airlines", "United Airlines"],
            "seating_class": ["Economy"],
            "number_stops": ["0"],
        },
    ),
    "ride": (
        "GetRideSharing",
        {},
        {"number_of_seats": ["2"], "ride_type": ["Pool"], "shared_ride": ["True"]},
    ),
    "ride_trip": (
        "GetRideSharing",
        {"destination": "1200 Park Avenue"},
        {"number_of_seats": ["2"], "ride_type": ["Pool"]},
    ),
    "ride_comma": (
        "GetRideSharing",
        {"destination": "1200 Park Avenue, Emeryville"},
        {"ride_type": ["Regular"]},
    ),
    "ride_pier": (
        "GetRideSharing",
        {"destination": "Pier 39 (Embarcadero)"},
        {"ride_type": ["Pool"]},
    ),
    "weather": ("GetWeather", {"city": "Vallejo", "date": "2019-03-05"}, {}),
}
"""Instances: (function, slots the request states, preference slots with allowed values)."""


@dataclass(frozen=True)
class Case:
    """A prediction for an instance: the gold's first call with ``changes`` (None drops a
    slot), to ``function`` (None: the gold function; "": the answer held no call)."""

    id: str
    what: str
    instance: str
    changes: dict[str, Any] = field(default_factory=dict)
    function: str | None = None


CASES = [
    Case("hotel-exact", "exact gold call", "hotel"),
    Case("hotel-trip-exact", "exact gold call", "hotel_trip"),
    Case("dinner-exact", "exact gold call", "dinner"),
    Case("dinner-trip-exact", "exact gold call", "dinner_trip"),
    Case("flight-exact", "exact gold call", "flight"),
    Case("ride-exact", "exact gold call", "ride"),
    Case("ride-trip-exact", "exact gold call", "ride_trip"),
    Case("ride-comma-exact", "exact gold call, comma in a value", "ride_comma"),
    Case("weather-exact", "exact gold call, no preference slot", "weather"),
    Case("hotel-trip-alt", "other allowed value", "hotel_trip", {"average_star": "2"}),
    Case("dinner-trip-alt", "other allowed value", "dinner_trip", {"price_range": "inexpensive"}),
    Case("flight-alt", "other allowed value", "flight", {"airlines": "United Airlines"}),
    Case(
        "hotel-wrong-fn",
        "wrong function",
        "hotel",
        {"average_star": None, "has_wifi": None, "price_range": "cheap"},
        "GetRestaurants",
    ),
    Case("hotel-trip-wrong-fn", "wrong function, same slots", "hotel_trip", {}, "SearchHotels"),
    Case("flight-wrong-fn", "wrong function, same slots", "flight", {}, "GetTrains"),
    Case("ride-wrong-fn-case", "function name in lower case", "ride", {}, "getridesharing"),
    Case(
        "dinner-wrong-fn-pref",
        "wrong function with its own preference slot",
        "dinner",
        {"cuisine": None, "price_range": None, "genre": "Comedy"},
        "GetMovies",
    ),
    Case(
        "weather-wrong-fn",
        "wrong function, gold without preference slot",
        "weather",
        {"date": None, "city": None, "location": "Vallejo"},
        "GetHotels",
    ),
    Case("hotel-extra-pref", "extra preference slot", "hotel", {"number_of_rooms": "1"}),
    Case("dinner-extra-pref", "extra preference slot", "dinner", {"has_live_music": "True"}),
    Case("ride-trip-extra-pref", "extra preference slot", "ride_trip", {"shared_ride": "False"}),
    Case("hotel-extra-slot", "extra non-preference slot", "hotel", {"location": "Vallejo"}),
    Case("dinner-extra-slot", "extra non-preference slot", "dinner", {"city": "San Jose"}),
    Case("flight-extra-slot", "extra non-preference slot", "flight", {"refundable": "True"}),
    Case("hotel-missing-pref", "missing preference slot", "hotel", {"has_wifi": None}),
    Case("dinner-trip-missing", "missing preference slot", "dinner_trip", {"price_range": None}),
    Case(
        "flight-missing-two",
        "two preference slots missing",
        "flight",
        {"airlines": None, "seating_class": None},
    ),
    Case("hotel-trip-missing-base", "missing stated slot", "hotel_trip", {"location": None}),
    Case("hotel-wrong-star", "wrong value", "hotel", {"average_star": "3"}),
    Case("dinner-trip-wrong-time", "wrong value", "dinner_trip", {"time": "19:00"}),
    Case("ride-wrong-type", "wrong value", "ride", {"ride_type": "Luxury"}),
    Case("flight-wrong-city", "wrong value", "flight", {"destination_city": "Tacoma"}),
    Case("dinner-cuisine-case", "lower case", "dinner", {"cuisine": "italian"}),
    Case("flight-class-case", "lower case", "flight", {"seating_class": "economy"}),
    Case("ride-type-case", "upper case", "ride", {"ride_type": "POOL"}),
    Case("hotel-trip-city-case", "lower case", "hotel_trip", {"location": "vallejo"}),
    Case("hotel-wifi-bool", "boolean as JSON true", "hotel", {"has_wifi": True}),
    Case("hotel-wifi-lower", 'boolean as "true"', "hotel", {"has_wifi": "true"}),
    Case("hotel-wifi-upper", 'boolean as "TRUE"', "hotel", {"has_wifi": "TRUE"}),
    Case("dinner-music-bool", "boolean as JSON false", "dinner_trip", {"has_live_music": False}),
    Case("dinner-music-lower", 'boolean as "false"', "dinner_trip", {"has_live_music": "false"}),
    Case("ride-shared-yes", 'boolean as "yes"', "ride", {"shared_ride": "yes"}),
    Case("hotel-trip-dquoted", "value in double quotes", "hotel_trip", {"location": '"Vallejo"'}),
    Case("hotel-trip-squoted", "value in single quotes", "hotel_trip", {"location": "'Vallejo'"}),
    Case("dinner-squoted-pref", "value in single quotes", "dinner", {"cuisine": "'Italian'"}),
    Case("dinner-time-6pm", 'time "6 pm"', "dinner_trip", {"time": "6 pm"}),
    Case("dinner-time-600pm", 'time "6:00 pm"', "dinner_trip", {"time": "6:00 pm"}),
    Case("dinner-time-600PM", 'time "6:00 PM"', "dinner_trip", {"time": "6:00 PM"}),
    Case("dinner-time-dots", 'time "6 p.m."', "dinner_trip", {"time": "6 p.m."}),
    Case("dinner-time-600", 'time "6:00" (morning)', "dinner_trip", {"time": "6:00"}),
    Case("dinner-time-seconds", 'time "18:00:00"', "dinner_trip", {"time": "18:00:00"}),
    Case("hotel-date-slash", 'date "3/5"', "hotel_trip", {"check_in_date": "3/5"}),
    Case("hotel-date-dash", 'date "03-05"', "hotel_trip", {"check_in_date": "03-05"}),
    Case("hotel-date-month", 'date "March 5th"', "hotel_trip", {"check_in_date": "March 5th"}),
    Case("hotel-date-wrong", "wrong date", "hotel_trip", {"check_in_date": "2019-03-06"}),
    Case("flight-date-year", 'date "3/5/2019"', "flight", {"departure_date": "3/5/2019"}),
    Case(
        "flight-date-month", 'date "March 5, 2019"', "flight", {"departure_date": "March 5, 2019"}
    ),
    Case("dinner-date-day-first", 'date "7 March"', "dinner_trip", {"date": "7 March"}),
    Case("dinner-date-short", 'date "2019-3-7"', "dinner_trip", {"date": "2019-3-7"}),
    Case("weather-date-slash", 'date "3/5"', "weather", {"date": "3/5"}),
    Case("hotel-star-int", "number as int", "hotel", {"average_star": 2}),
    Case("ride-seats-int", "number as int", "ride", {"number_of_seats": 2}),
    Case("flight-stops-int", "number as int (zero)", "flight", {"number_stops": 0}),
    Case("hotel-rooms-float", "number as float", "hotel_trip", {"number_of_rooms": 1.0}),
    Case("hotel-star-text", 'number as "2.0"', "hotel", {"average_star": "2.0"}),
    Case("ride-seats-word", 'number as "two"', "ride", {"number_of_seats": "two"}),
    Case("hotel-wifi-empty", "empty value", "hotel", {"has_wifi": ""}),
    Case("hotel-extra-empty", "extra preference slot, empty", "hotel", {"number_of_rooms": ""}),
    Case("hotel-trip-padded", "value with spaces around", "hotel_trip", {"location": " Vallejo "}),
    Case("ride-pier-exact", "exact gold call, ')' in a value", "ride_pier"),
    Case("ride-trip-paren", "')' in a value", "ride_trip", {"destination": "Pier 39 (North)"}),
    Case("dinner-no-call", "answer without a call", "dinner", {}, ""),
]

DOCUMENTED = {
    "value with ')': PRefine's call pattern stops there",
    "gold value with ')': PRefine's call pattern cuts the gold call there",
    "month-name date read (month_dates)",
}
"""Reasons docs/mpt.md's differences table names."""


def stop(message: str) -> NoReturn:
    """One line on stderr, exit 2."""
    print(f"mpt_scorer_agreement: {message}", file=sys.stderr)
    sys.exit(2)


def load_prefine(checkout: Path) -> ModuleType:
    """PRefine's ``exp7.evaluation.core`` from a checkout; exits 2 with one line if absent."""
    source = checkout / "src"
    if not (source / "exp7" / "evaluation" / "core.py").is_file():
        stop(f"no src/exp7/evaluation/core.py under {checkout} (a PRefine checkout?)")
    sys.path.insert(0, str(source))
    try:
        core = importlib.import_module("exp7.evaluation.core")
    except ImportError as exc:
        stop(f"cannot import PRefine's scorer from {source}: {exc}")
    if not all(hasattr(core, name) for name in ("_evaluate_rows", "_merge_metrics")):
        stop("PRefine's scorer has no _evaluate_rows / _merge_metrics (another version?)")
    return core


def prediction(case: Case) -> tuple[str, dict[str, Any] | None]:
    """The function a case calls and its arguments (None: no call)."""
    name, base, prefs = INSTANCES[case.instance]
    if case.function == "":
        return "", None
    arguments = dict(gold_calls(name, prefs, base)[0]["arguments"]) | case.changes
    return case.function or name, {k: v for k, v in arguments.items() if v is not None}


def as_text(name: str, arguments: dict[str, Any] | None, form: str) -> str:
    """The prediction as an agent writes it: a JSON answer or a call string."""
    if arguments is None:
        return ""
    if form == "json":
        return json.dumps({"function": name, "arguments": arguments}, ensure_ascii=False)
    parts = [
        f'{k}="{v}"' if isinstance(v, str) else f"{k}={json.dumps(v)}" for k, v in arguments.items()
    ]
    return f"{name}({', '.join(parts)})"


def gold_texts(instance: str) -> list[str]:
    """The gold as PRefine's prepared record holds it: one call per combination, sorted."""
    name, base, prefs = INSTANCES[instance]
    calls = gold_calls(name, prefs, base)
    return sorted(
        "{}({})".format(name, ", ".join(f'{k}="{v}"' for k, v in sorted(c["arguments"].items())))
        for c in calls
    )


def outcome(case: Case) -> MPTEvalOutcome:
    """The case as rapport's eval session records it."""
    name, base, prefs = INSTANCES[case.instance]
    called, arguments = prediction(case)
    allowed = {k: [v] for k, v in base.items()} | prefs
    return MPTEvalOutcome(
        challenge="recall",
        query_type="multi-turn" if base else "single-turn",
        domain=name,
        difficulty="easy",
        predicted=arguments,
        predicted_name=called if arguments is not None else None,
        valid=arguments is not None,
        gold=gold_calls(name, prefs, base)[0],
        allowed=allowed,
        pref_slots=sorted(s for s in allowed if s in PREF_LIST.get(name, [])),
        pref_map=PREF_LIST,
    )


def ours(case: Case, month_dates: bool) -> dict[str, Any]:
    """rapport's P-EM, OA (tp, fp, fn) and preference (tp, fp, fn) of a case."""
    s = instance_scores(
        outcome(case), lambda slot, value: False, dates="month_names" if month_dates else "exp7"
    )
    return {
        "p_em": int(s["p_em"]),
        "oa": [int(s["oa_tp"]), int(s["oa_pred"] - s["oa_tp"]), int(s["oa_gold"] - s["oa_tp"])],
        "pref": [
            int(s["pref_tp"]),
            int(s["pref_pred"] - s["pref_tp"]),
            int(s["pref_gold"] - s["pref_tp"]),
        ],
        "row": s,
    }


def theirs(core: ModuleType, case: Case, form: str) -> dict[str, Any]:
    """PRefine's scores of a case: ``_evaluate_rows`` is what its ``evaluate_run`` applies to
    each condition's (prepared record, prediction row) pairs once provenance checks pass."""
    record = {"instance_id": case.id, "ground_truth": gold_texts(case.instance)}
    row = {"instance_id": case.id, "prediction": as_text(*prediction(case), form), "error": None}
    prefs = {name: set(slots) for name, slots in PREF_LIST.items()}
    result = core._evaluate_rows([(record, row)], prefs)
    overall, pref = result["overall"], result["preference"]["slot_value"]
    return {
        "p_em": result["preference"]["exact_match"]["count"],
        "oa": [overall[k] for k in ("tp", "fp", "fn")],
        "pref": [pref[k] for k in ("tp", "fp", "fn")],
        "row": result,
    }


def reason(case: Case, form: str, month_dates: bool) -> str:
    """Why a case may score differently, from what the prediction and gold hold."""
    _, arguments = prediction(case)
    values = dict(arguments or {})
    texts = [v for v in values.values() if isinstance(v, str)]
    if not INSTANCES[case.instance][2]:
        return "gold has no preference slot"
    if ")" in gold_texts(case.instance)[0][:-1]:
        return "gold value with ')': PRefine's call pattern cuts the gold call there"
    if form == "call" and any(")" in t for t in texts):
        return "value with ')': PRefine's call pattern stops there"
    if month_dates and any(
        normalize(s, v, dates="month_names") != normalize(s, v) for s, v in values.items()
    ):
        return "month-name date read (month_dates)"
    if any(not t.strip() for t in texts):
        return "empty value: rapport drops the slot, PRefine counts it"
    if any(t != t.strip() for t in texts):
        return "spaces around a value: rapport strips them, PRefine keeps them"
    if any(len(t) >= 2 and t[0] == t[-1] and t[0] in "'\"" for t in texts):
        return "value in its own quotes: rapport drops them, PRefine keeps them"
    if any(isinstance(v, float) and v.is_integer() for v in values.values()):
        return "integral float: rapport reads 1.0 as 1, PRefine as 1.0"
    return "not explained"


def micro(rapport_rows: list[dict[str, float]], merged: dict[str, Any]) -> dict[str, Any]:
    """P-EM and OA-F1 over all cases: rapport's micro F1, PRefine's merged metrics."""
    tp, pred, gold = (sum(r[f"oa_{k}"] for r in rapport_rows) for k in ("tp", "pred", "gold"))
    return {
        "rapport": {
            "p_em": sum(r["p_em"] for r in rapport_rows) / len(rapport_rows),
            "oa_f1": micro_f1(rapport_rows, "oa"),
            "oa_counts": [int(tp), int(pred - tp), int(gold - tp)],
        },
        "prefine": {
            "p_em": merged["preference"]["exact_match"]["rate"],
            "oa_f1": merged["overall"]["f1"],
            "oa_counts": [merged["overall"][k] for k in ("tp", "fp", "fn")],
        },
    }


def compare(core: ModuleType, form: str, month_dates: bool) -> dict[str, Any]:
    """Both scorers over every case: agreement counts, micro aggregates, each difference."""
    equal = dict.fromkeys(("p_em", "oa_counts", "pref_counts", "all"), 0)
    rapport_rows, prefine_rows, differences = [], [], []
    for case in CASES:
        a, b = ours(case, month_dates), theirs(core, case, form)
        rapport_rows.append(a.pop("row"))
        prefine_rows.append(b.pop("row"))
        same = {"p_em": a["p_em"] == b["p_em"], "oa_counts": a["oa"] == b["oa"]}
        same["pref_counts"] = a["pref"] == b["pref"]
        same["all"] = all(same.values())
        equal = {k: n + int(same[k]) for k, n in equal.items()}
        if not same["all"]:
            why = reason(case, form, month_dates)
            differences.append(
                {
                    "case": case.id,
                    "what": case.what,
                    "reason": why,
                    "in_docs_table": why in DOCUMENTED,
                    "prediction": as_text(*prediction(case), form),
                    "gold": gold_texts(case.instance),
                    "rapport": a,
                    "prefine": b,
                }
            )
    return {
        "benchmark": "mpt_scorer_agreement",
        "prediction_form": form,
        "month_dates": month_dates,
        "cases": len(CASES),
        "equal": equal,
        "differing": len(differences),
        "by_reason": dict(Counter(d["reason"] for d in differences)),
        "micro": micro(rapport_rows, core._merge_metrics(prefine_rows)),
        "differences": differences,
    }


def dumps(report: dict[str, Any]) -> str:
    """The report as JSON, one line per difference."""
    head = json.dumps({k: v for k, v in report.items() if k != "differences"}, indent=2)
    rows = ",\n    ".join(json.dumps(d, ensure_ascii=False) for d in report["differences"])
    return f'{head[:-2]},\n  "differences": [\n    {rows}\n  ]\n}}'


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--prefine", type=Path, required=True, help="a PRefine checkout")
    parser.add_argument("--month-dates", action="store_true", help="rapport reads month-name dates")
    parser.add_argument(
        "--form", choices=("json", "call"), default="json", help="the prediction PRefine reads"
    )
    args = parser.parse_args()
    core = load_prefine(args.prefine)
    print(dumps(compare(core, args.form, args.month_dates)))


if __name__ == "__main__":
    main()
