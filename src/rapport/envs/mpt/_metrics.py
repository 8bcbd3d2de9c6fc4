"""MPT metrics: P-EM, OA-F1, F1, token cost, their declarations (`METRICS`) and their
aggregation with bootstrap CIs.

Per instance the scores keep F1's components (true positives, predicted, gold) so that the
report can aggregate them as micro F1 over all (domain, slot, value) triples. The scores hold
scores only: the date rule a run scored with is one of its options.
"""

from __future__ import annotations

import calendar
import json
import math
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, Literal

import numpy as np

from rapport._stats import bootstrap_interval
from rapport.log import Metric

from ._dates import dateparser_value
from ._types import MPTEvalOutcome

Allows = Callable[[str, Any], bool]

DateRule = Literal["exp7", "month_names", "dateparser"]
"""How date and time slot values are normalised (see `normalize`)."""


_ISO_DATE = re.compile(r"^(?:\d{4}-)?(\d{1,2})-(\d{1,2})$")
_SLASH_DATE = re.compile(r"^(\d{1,2})/(\d{1,2})(?:/\d{2,4})?$")
_TIME = re.compile(r"^(\d{1,2}):(\d{2})(?:\s*([ap])\.?m\.?)?$", re.I)
_HOUR = re.compile(r"^(\d{1,2})\s*([ap])\.?m\.?$", re.I)
_MONTHS = {m: i + 1 for i, m in enumerate(calendar.month_name[1:])} | {
    m: i + 1 for i, m in enumerate(calendar.month_abbr[1:])
}
_WORD_DATE = re.compile(
    r"^(?:(?P<m1>[A-Za-z]+)\.?\s+(?P<d1>\d{1,2})(?:st|nd|rd|th)?"
    r"|(?:the\s+)?(?P<d2>\d{1,2})(?:st|nd|rd|th)?\s+(?:of\s+)?(?P<m2>[A-Za-z]+))"
    r"(?:,?\s+\d{4})?$",
    re.I,
)


def _text(value: Any) -> str:
    """A value as PRefine's scorer sees it: the JSON text its call string holds, with a
    string's own quotes dropped (``"Vallejo"`` -> ``Vallejo``, ``1.0`` -> ``1.0``, ``True``
    -> ``true``); what a string holds is kept, spaces and quotes included."""
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)[1:-1]
    try:
        return json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        return str(value)


def _month_day(month: int, day: int) -> str | None:
    return f"{month:02d}-{day:02d}" if 1 <= month <= 12 and 1 <= day <= 31 else None


def _word_date(value: str) -> str | None:
    match = _WORD_DATE.fullmatch(value)
    if not match:
        return None
    month = _MONTHS.get((match["m1"] or match["m2"]).capitalize())
    return _month_day(month, int(match["d1"] or match["d2"])) if month else None


def _time(value: str) -> str | None:
    match = _TIME.fullmatch(value)
    if match:
        hour, minute, marker = int(match[1]), int(match[2]), match[3]
    elif match := _HOUR.fullmatch(value):
        hour, minute, marker = int(match[1]), 0, match[2]
    else:
        return None
    if marker:
        hour = hour % 12 + (12 if marker.lower() == "p" else 0)
    return f"{hour:02d}:{minute:02d}" if 0 <= hour < 24 and 0 <= minute < 60 else None


def normalize(slot: str, value: Any, *, dates: DateRule = "exp7") -> str:
    """A value as PRefine's scorer compares it: its JSON text (a string without the quotes
    JSON puts around it, and nothing else removed), ``True``/``False`` for ``true``/``false``
    in any case; a time in a ``*time*`` slot as ``HH:MM``; a date in a ``*date*``/``*day*``
    slot as ``MM-DD``. Case is kept, as PRefine keeps it.

    ``dates`` picks the date and time rule: ``exp7`` (the release's scorer: ISO and ``M/D``
    dates, clock times), ``month_names`` (the same, and dates written with a month name,
    ``March 15th``, read as ``MM-DD`` too, which exp7 leaves as written) or ``dateparser``
    (the paper-era scorer: both read by the `dateparser` package, see `dateparser_value`).

    Raises:
        DateparserMissing: ``dates="dateparser"`` without the package.
    """
    text = _text(value)
    if text.lower() in ("true", "false"):
        return text.capitalize()
    if dates == "dateparser":
        return dateparser_value(slot, text)
    name = slot.lower()
    if "time" in name and (clock := _time(text)):
        return clock
    if "date" in name or "day" in name:
        match = _ISO_DATE.fullmatch(text) or _SLASH_DATE.fullmatch(text)
        if match:
            day = _month_day(int(match[1]), int(match[2]))
        else:
            day = _word_date(text) if dates == "month_names" else None
        if day:
            return day
    return text


def _present(args: Mapping[str, Any]) -> dict[str, Any]:
    """The slots a call states: every one but those set to null (an empty string counts, as
    PRefine counts it)."""
    return {k: v for k, v in args.items() if v is not None}


def allowed_values(outcome: MPTEvalOutcome) -> dict[str, list[Any]]:
    """Every gold slot with its allowed values (one value when the instance has no choice)."""
    if outcome.allowed:
        return outcome.allowed
    return {s: [v] for s, v in _present(outcome.gold.arguments).items()}


Counts = tuple[int, int, int]


def call_counts(
    gold: Mapping[tuple[str, str], Iterable[Any]],
    pred: Mapping[tuple[str, str], Any],
    *,
    dates: DateRule = "exp7",
) -> tuple[int, int, int]:
    """(true positives, false positives, false negatives) over (function, slot) keys: a gold
    key is found when the predicted value is one of its allowed values (PRefine's rule)."""
    allowed = {k: {normalize(k[1], v, dates=dates) for v in vs} for k, vs in gold.items()}
    found = {k for k, v in pred.items() if normalize(k[1], v, dates=dates) in allowed.get(k, set())}
    return len(found), len(pred) - len(found), len(allowed) - len(found)


def exact_match(
    pred: Mapping[str, Any],
    gold: Mapping[str, Any],
    slots: Iterable[str],
    *,
    dates: DateRule = "exp7",
) -> float:
    """1.0 when every listed slot has the gold value (normalized as `normalize`)."""
    ok = all(
        s in pred and normalize(s, pred[s], dates=dates) == normalize(s, gold.get(s), dates=dates)
        for s in slots
    )
    return 1.0 if ok else 0.0


def oa_counts(
    pred: Mapping[str, Any],
    gold: Mapping[str, Any],
    open_slots: Iterable[str],
    allows: Allows,
    *,
    dates: DateRule = "exp7",
) -> tuple[int, int, int]:
    """(true positives, predicted, gold) for OA-F1: an open slot counts with any allowed value."""
    pred, gold = _present(pred), _present(gold)
    opened = set(open_slots)
    tp = sum(
        1
        for s, v in pred.items()
        if s in gold
        and (
            normalize(s, v, dates=dates) == normalize(s, gold[s], dates=dates)
            or (s in opened and allows(s, v))
        )
    )
    return tp, len(pred), len(gold)


def strict_counts(
    pred: Mapping[str, Any],
    gold: Mapping[str, Any],
    open_slots: Iterable[str],
    *,
    dates: DateRule = "exp7",
) -> tuple[int, int, int]:
    """(true positives, predicted, gold) over slots the query or preferences determine."""
    opened = set(open_slots)
    pred = {s: v for s, v in _present(pred).items() if s not in opened}
    gold = {s: v for s, v in _present(gold).items() if s not in opened}
    tp = sum(
        1
        for s, v in pred.items()
        if s in gold and normalize(s, v, dates=dates) == normalize(s, gold[s], dates=dates)
    )
    return tp, len(pred), len(gold)


def f1(tp: float, n_pred: float, n_gold: float) -> float:
    """F1 from counts (0 when nothing was predicted or expected)."""
    denominator = n_pred + n_gold
    return 2.0 * tp / denominator if denominator else 0.0


def _oa(outcome: MPTEvalOutcome, pred: dict[str, Any], allows: Allows, dates: DateRule) -> Counts:
    """OA counts with allowed alternatives; a call to the wrong function matches nothing."""
    allowed = allowed_values(outcome)
    if (outcome.predicted_name or outcome.gold.name) != outcome.gold.name:
        return 0, len(pred), len(allowed)
    opened = set(outcome.open_slots)
    tp = sum(
        1
        for s, v in pred.items()
        if s in allowed
        and (
            normalize(s, v, dates=dates) in {normalize(s, a, dates=dates) for a in allowed[s]}
            or (s in opened and allows(s, v))
        )
    )
    return tp, len(pred), len(allowed)


def _ea(outcome: MPTEvalOutcome, pred: dict[str, Any], dates: DateRule) -> Counts:
    """EA counts: a predicted slot is a true positive only when its value is the gold call's
    own (no allowed alternative, no open slot); a call to the wrong function matches nothing."""
    gold = _present(outcome.gold.arguments)
    if (outcome.predicted_name or outcome.gold.name) != outcome.gold.name:
        return 0, len(pred), len(gold)
    tp = sum(
        1
        for s, v in pred.items()
        if s in gold and normalize(s, v, dates=dates) == normalize(s, gold[s], dates=dates)
    )
    return tp, len(pred), len(gold)


def preference_counts(
    outcome: MPTEvalOutcome, pred: dict[str, Any], *, dates: DateRule = "exp7"
) -> tuple[int, int, int]:
    """(tp, fp, fn) over preference slots, keyed by (function, slot) as PRefine keys them.

    Gold keys are the instance's preference slots; predicted keys are the predicted slots
    that are preference slots of the predicted function (``pref_map``, else the instance's).
    """
    gold_name = outcome.gold.name
    name = outcome.predicted_name or gold_name
    allowed = allowed_values(outcome)
    pref_names = set(outcome.pref_map.get(name, []))
    if name == gold_name:
        pref_names |= set(outcome.pref_slots)
    gold = {(gold_name, s): allowed.get(s, []) for s in outcome.pref_slots}
    predicted = {(name, s): v for s, v in pred.items() if s in pref_names}
    return call_counts(gold, predicted, dates=dates)


def instance_scores(
    outcome: MPTEvalOutcome,
    allows: Allows,
    *,
    context_tokens: int = 0,
    dates: DateRule = "exp7",
) -> dict[str, float]:
    """Every per-instance score from an eval session's outcome and the tokens of what memory
    put in the agent's prompt (``dates``: the date rule, see `normalize`).

    P-EM needs no false positive and no false negative over (function, slot) preference keys,
    as PRefine counts it: every gold preference slot with an allowed value and no extra
    preference slot (so a wrong function fails whenever the gold has a preference slot).
    OA-F1 counts a predicted slot when its value is one of the allowed gold values (any value
    the schema allows on an open slot); a wrong function matches nothing.
    """
    pred = _present(outcome.predicted or {})
    gold_name = outcome.gold.name
    # No call (the output stayed invalid) names no function: nothing about it is right.
    right = outcome.predicted is not None and (outcome.predicted_name or gold_name) == gold_name
    oa = _oa(outcome, pred, allows, dates)
    ea = _ea(outcome, pred, dates)
    ptp, pfp, pfn = preference_counts(outcome, pred, dates=dates)
    st = strict_counts(pred, outcome.gold.arguments, outcome.open_slots, dates=dates)
    if not right:
        st = (0, st[1], st[2])
    focal = (
        exact_match(pred, outcome.gold.arguments, outcome.focal_slots, dates=dates)
        if right
        else 0.0
    )
    scores = {
        "valid": 1.0 if outcome.valid else 0.0,
        "function_ok": 1.0 if right else 0.0,
        "p_em": 1.0 if pfp == 0 and pfn == 0 else 0.0,
        "focal_em": focal,
        "oa_tp": float(oa[0]),
        "oa_pred": float(oa[1]),
        "oa_gold": float(oa[2]),
        "oa_f1": f1(*oa),
        "ea_tp": float(ea[0]),
        "ea_pred": float(ea[1]),
        "ea_gold": float(ea[2]),
        "ea_f1": f1(*ea),
        "f1_tp": float(st[0]),
        "f1_pred": float(st[1]),
        "f1_gold": float(st[2]),
        "f1": f1(*st),
        "pref_tp": float(ptp),
        "pref_pred": float(ptp + pfp),
        "pref_gold": float(ptp + pfn),
    }
    context = float(context_tokens)
    full = float(outcome.full_history_tokens)
    scores.update(
        context_tokens=context,
        full_history_tokens=full,
        token_ratio=context / full if full else 0.0,
    )
    return scores


def micro_f1(rows: Sequence[Mapping[str, float]], prefix: str) -> float:
    """Micro F1 of rows holding ``{prefix}_tp``, ``{prefix}_pred``, ``{prefix}_gold``."""
    return f1(*(sum(r.get(f"{prefix}_{k}", 0.0) for r in rows) for k in ("tp", "pred", "gold")))


def micro_precision(rows: Sequence[Mapping[str, float]], prefix: str) -> float:
    """Micro precision of a counted metric: true positives over predicted."""
    tp, pred = (sum(r.get(f"{prefix}_{k}", 0.0) for r in rows) for k in ("tp", "pred"))
    return tp / pred if pred else 0.0


def micro_recall(rows: Sequence[Mapping[str, float]], prefix: str) -> float:
    """Micro recall of a counted metric: true positives over gold."""
    tp, gold = (sum(r.get(f"{prefix}_{k}", 0.0) for r in rows) for k in ("tp", "gold"))
    return tp / gold if gold else 0.0


def mean_of(key: str) -> Callable[[Sequence[Mapping[str, float]]], float]:
    """A statistic: the mean of one score."""

    def statistic(rows: Sequence[Mapping[str, float]]) -> float:
        values = [r[key] for r in rows if key in r]
        return float(np.mean(values)) if values else math.nan

    return statistic


def micro_of(prefix: str) -> Callable[[Sequence[Mapping[str, float]]], float]:
    """A statistic: micro F1 of one counted metric (``oa`` or ``f1``)."""
    return lambda rows: micro_f1(rows, prefix)


GUIDED = "context-guided"
FREE = "context-free"
POOLED = "both regimes'"
"""What a table that pools the query types computes a metric over (its instances)."""

METRICS = (
    Metric(name="p_em", label="P-EM", regime=GUIDED, over="instances", reducer="mean"),
    Metric(name="ea_f1", label="EA-F1", regime=GUIDED, over="instances", reducer="micro"),
    Metric(name="oa_f1", label="OA-F1", regime=GUIDED, over="instances", reducer="micro"),
    Metric(name="precision", label="P", regime=FREE, over="instances", reducer="micro"),
    Metric(name="recall", label="R", regime=FREE, over="instances", reducer="micro"),
    Metric(name="f1", label="F1", regime=FREE, over="instances", reducer="micro"),
    Metric(
        name="token_ratio",
        label="tokens / full history",
        over="instances",
        reducer="mean",
        lower_is_better=True,
    ),
)
"""MPT's metrics as the paper reports them: P-EM, EA-F1 and OA-F1 on context-guided
queries, P / R / F1 on context-free ones, each over instances; the token ratio on both."""
DECLARED = {m.name: m for m in METRICS}

Statistic = Callable[[Sequence[Mapping[str, float]]], float]
_MICRO: dict[str, Statistic] = {
    "ea_f1": micro_of("ea"),
    "oa_f1": micro_of("oa"),
    "precision": lambda rows: micro_precision(rows, "f1"),
    "recall": lambda rows: micro_recall(rows, "f1"),
    "f1": micro_of("f1"),
}


def statistic(metric: Metric) -> Statistic:
    """How a set of instances gives the metric, as declared: a mean of the instance scores,
    or micro precision / recall / F1 of their counts."""
    return mean_of(metric.name) if metric.reducer == "mean" else _MICRO[metric.name]


def summarize(rows: Sequence[Mapping[str, float]], *, resamples: int = 1000) -> dict[str, Any]:
    """Every metric of `METRICS` over a set of instances, reduced as declared; those of a
    regime with a 95% bootstrap CI (``NAME_ci``); and the schema-valid share."""
    out: dict[str, Any] = {"n": len(rows)}
    for metric in METRICS:
        stat = statistic(metric)
        out[metric.name] = stat(rows) if rows else math.nan
        if metric.regime:
            out[f"{metric.name}_ci"] = bootstrap_interval(rows, stat, resamples=resamples)
    out["valid"] = mean_of("valid")(rows) if rows else math.nan
    return out
