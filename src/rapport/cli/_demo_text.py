"""What ``rapport demo`` prints after its table: what was measured, what it shows, a text
curve per session, and where to look next."""

from __future__ import annotations

import shlex
from pathlib import Path

from rapport.report import CurvePoint, PairedDifference, Report

METRIC = "f1"
"""F1 over the arguments a request and the user's preferences fix, per evaluation session,
averaged over each user's sessions of both query types and then over users (the report's
``f1 (regimes pooled)``; the paper's F1 is the context-free regime's micro-F1 over
instances, in the MPT table). The embedded models fill nearly every optional argument,
which P-EM counts as a miss, so P-EM stays near 0 on them while F1 moves with what memory
shows."""
BAR = 30
"""Characters of a full bar (a score of 1)."""


def what_it_shows(report: Report, why: str, kinds: dict[int, str] | None = None) -> str:
    """The demo's closing text for an MPT run, in plain words; `kinds` names each evaluation
    session index's query type (context-guided, context-free)."""
    parts = [
        _measured(report),
        why,
        session_curve(report.curves, METRIC, kinds),
        _verdict(report.paired, report.baseline or "none"),
        f"HTML report: {Path(report.run_dir) / 'report.html'}\n"
        f"Read every session in the browser: rapport view {shlex.quote(report.run_dir)}",
    ]
    return "\n\n".join(parts)


def _measured(report: Report) -> str:
    config = report.description.config if report.description else {}
    model = config.get("models", {}).get("all", "?")
    sessions = config.get("options", {}).get("sessions_max", "?")
    conditions = ", ".join(report.conditions)
    return (
        f"What was measured: {report.users} generated users (seed {config.get('seed', '?')}) "
        f"each made {sessions} "
        "bookings and searches (history sessions) whose calls show their preferences, such "
        "as a budget or a party size. Memory learned from those sessions. Then each user "
        "asked for new calls in domains they had used (recall), and the agent "
        f"({model}) answered with what its memory gave it. Conditions: {conditions}. "
        f"{report.eval_sessions} evaluation sessions in all. The score is F1 over the "
        "arguments the request and the user's preferences fix (open arguments left out): "
        "1 when the call sets each of them to the user's value and adds none; below, it is "
        "the mean over each user's evaluation sessions of both query types, then over users "
        "(the paper's F1, micro over context-free instances, is in the MPT table). The "
        "report also "
        "has P-EM, the paper's strict score; the embedded models fill nearly every optional "
        "argument, and P-EM counts each extra preference argument as a miss."
    )


def session_curve(
    curves: dict[str, dict[str, list[CurvePoint]]],
    metric: str,
    kinds: dict[int, str] | None = None,
) -> str:
    """The metric per evaluation session and condition (mean over users), as text bars.

    Sessions are numbered as the run numbers them (history sessions first, from 1); `kinds`
    adds what each one asked (MPT's query type), since the sessions differ in kind, not only
    in how much memory had seen."""
    lines = [f"{metric} per evaluation session (mean over users; history sessions come first):"]
    width = max((len(c) for c in curves), default=4)
    indexes = sorted({p.index for by in curves.values() for p in by.get(metric, [])})
    kinds = kinds or {}
    labels = {i: f"session {i + 1}" + (f" ({kinds[i]})" if i in kinds else "") for i in indexes}
    label_width = max((len(v) for v in labels.values()), default=0) + 2
    for index in indexes:
        for condition, by_metric in curves.items():
            point = next((p for p in by_metric.get(metric, []) if p.index == index), None)
            if point is None:
                continue
            bar = "#" * round(point.mean * BAR)
            label = labels[index] if condition == next(iter(curves)) else ""
            lines.append(
                f"  {label:<{label_width}}{condition:<{width}}  {point.mean:.2f} |{bar:<{BAR}}| "
                f"({point.users} users)"
            )
    return "\n".join(lines)


def _verdict(paired: dict[str, dict[str, PairedDifference]], baseline: str) -> str:
    lines = [
        f"What it shows ({METRIC} over both query types, each memory minus {baseline}, "
        "paired by user):"
    ]
    for condition, diffs in paired.items():
        d = diffs.get(METRIC)
        if d is None:
            continue
        ci = f"{d.mean:+.3f}, 95% CI [{d.ci_low:+.3f}, {d.ci_high:+.3f}], {d.users} users"
        if d.ci_low > 0:
            meaning = f"{condition} beats {baseline}: the CI excludes zero."
        elif d.ci_high < 0:
            meaning = f"{condition} is below {baseline}: the CI excludes zero."
        else:
            meaning = "no clear difference at this size: the CI includes zero."
        lines.append(f"  {condition}: {ci}. {meaning}")
    if len(lines) == 1:
        lines.append("  (no condition to compare with the baseline)")
    return "\n".join(lines)
