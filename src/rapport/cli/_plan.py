"""``rapport run ... --plan``: what the run will do, estimated, with nothing run or written."""

from __future__ import annotations

import argparse
import math
from pathlib import Path

from rapport.eval import ExperimentConfig, ExperimentError, RunPlan, plan_experiment

from ._errors import UsageError
from ._protocol import shown


def add_plan_flags(parser: argparse.ArgumentParser) -> None:
    """``--plan``, ``--like RUN_DIR``, ``--tokens-per-s N`` and ``--format``."""
    group = parser.add_argument_group("plan (print what the run will do, run nothing)")
    group.add_argument(
        "--plan",
        action="store_true",
        help="print the run's sessions, the model of every role, estimated calls, tokens "
        "and GPU-hours and its differences from the paper, then exit; writes nothing",
    )
    group.add_argument(
        "--like",
        metavar="RUN_DIR",
        help="with --plan: estimate from this finished run's measured use per session",
    )
    group.add_argument(
        "--tokens-per-s",
        metavar="N",
        help="with --plan: the completion tokens per second the models run at (GPU-hours)",
    )
    group.add_argument(
        "--format", choices=("table", "json"), default=None, help="with --plan: output form"
    )


def plan_requested(args: argparse.Namespace) -> bool:
    """Whether the command asks for a plan; a plan-only flag without ``--plan`` is refused.

    Raises:
        UsageError: ``--like``, ``--tokens-per-s`` or ``--format`` without ``--plan``.
    """
    if args.plan:
        return True
    for flag in ("like", "tokens_per_s", "format"):
        if getattr(args, flag) is not None:
            raise UsageError(f"--{flag.replace('_', '-')} goes with --plan")
    return False


def print_plan(args: argparse.Namespace, config: ExperimentConfig) -> int:
    """Print the plan of the run the config describes; exit 0."""
    like = Path(args.like) if args.like is not None else None
    try:
        plan = plan_experiment(config, like=like, tokens_per_s=_throughput(args.tokens_per_s))
    except ExperimentError as exc:
        raise UsageError(str(exc)) from exc
    if args.format == "json":
        print(plan.model_dump_json(indent=2))
    else:
        print(render_plan(plan))
    return 0


def _throughput(raw: str | None) -> float | None:
    if raw is None:
        return None
    try:
        value = float(raw)
    except ValueError:
        value = math.nan
    if not math.isfinite(value) or value <= 0:
        raise UsageError(f"--tokens-per-s must be a positive number, not {raw!r}")
    return value


def _count(value: int | None) -> str:
    return "?" if value is None else f"{value:,}"


def render_plan(plan: RunPlan) -> str:
    """The plan as text, one fact a line and the roles as a table."""
    conditions = ", ".join(
        c.name if c.name == c.memory else f"{c.name} (memory {c.memory})" for c in plan.conditions
    )
    per_user = ", ".join(f"{n} ({users} users)" for n, users in plan.sessions_per_user.items())
    lines = [
        f"Plan for {plan.benchmark}: nothing is run or written.",
        f"run dir: {plan.run_dir}",
        "preset: " + (plan.preset or "none (the paper's protocol)"),
        f"users: {plan.users}; sessions per user: {per_user}",
        f"conditions ({len(plan.conditions)}): {conditions}",
        f"sessions per condition: {_count(plan.conditions[0].sessions if plan.conditions else 0)}"
        f"; in all: {_count(plan.sessions)}",
    ]
    if plan.datasets:
        lines.append(
            "datasets (sessions per condition): "
            + ", ".join(f"{d} {n:,}" for d, n in plan.datasets.items())
        )
    lines += _roles_table(plan)
    lines.append(_gpu_line(plan))
    lines.append(f"differs from the paper: {_differences(plan)}")
    lines.append(f"rounding: {plan.rounding}")
    return "\n".join(lines)


def _roles_table(plan: RunPlan) -> list[str]:
    basis = "caps: the protocol's most per session"
    if plan.like:
        basis = f"measured: the means per session of {plan.like}; " + basis
    head = ["role", "model", "from", "calls", "prompt tokens", "completion tokens", "basis"]
    rows = [
        [
            r.role,
            r.model,
            {"own": "its own", "all": "falls back to all", "default": "rapport's default"}[
                r.model_from
            ],
            _count(r.calls),
            _count(r.prompt_tokens),
            _count(r.completion_tokens),
            r.basis,
        ]
        for r in plan.roles
    ]
    widths = [max(len(row[i]) for row in [head, *rows]) for i in range(len(head))]
    table = [
        "  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip()
        for row in [head, *rows]
    ]
    note = f"(totals over the run; {basis}; ?: neither capped nor measured)"
    return ["models and estimated use per role " + note, *("  " + line for line in table)]


def _gpu_line(plan: RunPlan) -> str:
    if plan.tokens_per_s is None:
        return "GPU-hours: give --tokens-per-s N (completion tokens per second)"
    if plan.gpu_hours is None:
        return "GPU-hours: unknown (no role has a completion-token estimate: give --like RUN_DIR)"
    covered = ", ".join(plan.gpu_hours_roles)
    unknown = [r.role for r in plan.roles if r.role not in plan.gpu_hours_roles]
    line = (
        f"GPU-hours at {plan.tokens_per_s:g} completion tokens/s: {plan.gpu_hours:.2f} "
        f"(completion tokens of {covered})"
    )
    if unknown:
        line += f"; not counted (no token estimate): {', '.join(unknown)}"
    return line


def _differences(plan: RunPlan) -> str:
    if plan.differs_from_paper is None:
        return "paper protocol not declared"
    if not plan.differs_from_paper:
        return "none"
    return ", ".join(
        f"{d['setting']}={shown(d['ours'])} (paper: {shown(d['paper'])}, {d['source']})"
        for d in plan.differs_from_paper
    )
