"""What a run will do, before it does anything (``rapport run ... --plan``).

`plan_experiment` resolves a config as a run would (preset, benchmark options, conditions,
users and their sessions) and estimates its model use per role: from the benchmark's caps
per session (`Benchmark.session_caps`), and, given a finished run (``like``), from that
run's measured calls and tokens per session. It builds no model, loads no weights, asks no
server and writes nothing: it reads only what the benchmark reads to lay out its sessions.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field, ValidationError

from rapport._errors import error_line
from rapport.envs import (
    Benchmark,
    SessionCaps,
    apply_preset,
    benchmark_class,
    conditions_for,
    create_benchmark,
    differing,
)
from rapport.llm import DEFAULT_SPEC, ROLES, ModelError, ModelRoles, load_entry
from rapport.log import Condition, ExperimentConfig, SessionSpec
from rapport.memory import MEMORIES, is_memory

from ._orchestrator import one_line
from ._plan_like import Measured, measure_run
from ._prepare import _with_default_users, effective_options
from ._runner import ExperimentError

ROUNDING = (
    "calls and tokens are totals over the run, rounded to the nearest whole number once "
    "summed (a measured mean is not rounded first); GPU-hours to 2 decimals"
)


class ConditionPlan(BaseModel):
    """One condition of the planned run."""

    name: str
    memory: str
    sessions: int
    """Sessions it runs (every user's)."""


class RoleEstimate(BaseModel):
    """One model role: the model it runs on and its estimated use over the whole run."""

    role: str
    model: str
    model_from: str
    """Where the model comes from: ``own`` (``--model ROLE=``), ``all`` (the role falls
    back to ``--model all=``) or ``default`` (rapport's embedded model)."""
    calls: int | None = None
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    basis: str = "unknown"
    """``caps`` (the protocol's most per session), ``measured`` (the ``like`` run's means
    per session), ``measured+caps`` (measured where that run has the condition), or
    ``unknown`` (neither: a role whose use the benchmark does not cap)."""


class RunPlan(BaseModel):
    """What a run will do: its sessions, models and estimated use."""

    benchmark: str
    preset: str | None
    run_dir: str
    users: int
    sessions_per_user: dict[str, int]
    """Sessions per user -> how many users have that many (one entry for most runs)."""
    datasets: dict[str, int] = Field(default_factory=dict)
    """Dataset (as the benchmark's caps name it) -> sessions per condition."""
    conditions: list[ConditionPlan]
    sessions: int
    """Sessions in the whole run (all conditions)."""
    roles: list[RoleEstimate]
    like: str | None = None
    """The finished run whose measured means per session the estimate uses."""
    tokens_per_s: float | None = None
    gpu_hours: float | None = None
    """Completion tokens of every role with an estimate at ``tokens_per_s`` (None: not
    asked for, or no role has an estimate)."""
    gpu_hours_roles: list[str] = Field(default_factory=list)
    """The roles the GPU-hours cover (those with a completion-token estimate)."""
    differs_from_paper: list[dict[str, Any]] | None = None
    """The paper's settings this run does otherwise (None: no paper protocol declared)."""
    rounding: str = ROUNDING


def plan_experiment(
    config: ExperimentConfig, *, like: Path | None = None, tokens_per_s: float | None = None
) -> RunPlan:
    """The plan of a run: its sessions, the model of every role and the estimated use.

    Args:
        config: the experiment, as ``rapport run`` would take it.
        like: a finished run dir of the same benchmark, whose measured calls and tokens
            per session estimate this run's.
        tokens_per_s: the completion tokens per second the models run at (GPU-hours).

    Raises:
        ExperimentError: bad names or options, data that cannot be read, or a ``like``
            run dir that is not a run of this benchmark.
    """
    try:
        return _plan(config, like, tokens_per_s)
    except ExperimentError:
        raise
    except ValidationError as exc:
        raise ExperimentError(
            f"bad options for benchmark '{config.benchmark}': {error_line(exc)}"
        ) from exc
    except (ValueError, ModelError, ImportError, OSError, LookupError) as exc:
        raise ExperimentError(one_line(exc)) from exc


def _plan(config: ExperimentConfig, like: Path | None, tokens_per_s: float | None) -> RunPlan:
    config = apply_preset(config)
    benchmark = create_benchmark(config)
    config = _with_default_users(config, benchmark)
    config = config.model_copy(update={"options": effective_options(benchmark, config.options)})
    conditions = _conditions(benchmark, config)
    users = benchmark.users(config.users, config.seed)
    specs = [s for u in users for s in benchmark.sessions(u, config.sessions, config.seed)]
    caps = [benchmark.session_caps(s) for s in specs]
    measured = measure_run(like, config.benchmark) if like is not None else None
    asked = _asked(benchmark, conditions)
    roles = [_estimate(r, config, asked, caps, measured) for r in _roles(asked, config)]
    plan = RunPlan(
        benchmark=config.benchmark,
        preset=config.preset,
        run_dir=str(config.run_dir),
        users=len(users),
        sessions_per_user=_per_user(specs),
        datasets=dict(Counter(c.dataset for c in caps if c is not None and c.dataset)),
        conditions=[
            ConditionPlan(name=c.name, memory=c.memory, sessions=len(specs)) for c in conditions
        ],
        sessions=len(specs) * len(conditions),
        roles=roles,
        like=None if like is None else str(like),
        differs_from_paper=_differences(config),
    )
    return with_gpu_hours(plan, tokens_per_s)


def _conditions(benchmark: Benchmark, config: ExperimentConfig) -> list[Condition]:
    conditions = conditions_for(benchmark, config)
    for condition in conditions:
        if not is_memory(condition.memory):
            raise ExperimentError(
                f"unknown memory '{condition.memory}' (known: {', '.join(sorted(MEMORIES))})"
            )
    return conditions


def _per_user(specs: list[SessionSpec]) -> dict[str, int]:
    per_user = Counter(s.user_id for s in specs)
    return {str(n): users for n, users in sorted(Counter(per_user.values()).items())}


def _memory_roles(memory: str) -> tuple[str, ...] | None:
    """The roles a memory method asks for, read from its class (nothing is built)."""
    cls = load_entry(MEMORIES.get(memory, memory))
    roles: tuple[str, ...] | None = cls.roles
    return roles


def _asked(benchmark: Benchmark, conditions: list[Condition]) -> dict[str, set[str] | None]:
    """Condition name -> the roles its benchmark, agent and memory ask for (``judge`` for
    every judge role); None where one of them does not say."""
    asked: dict[str, set[str] | None] = {}
    for condition in conditions:
        memory = _memory_roles(condition.memory)
        if benchmark.roles is None or memory is None:
            asked[condition.name] = None
        else:
            asked[condition.name] = {"agent", *benchmark.roles, *memory}
    return asked


def _roles(asked: dict[str, set[str] | None], config: ExperimentConfig) -> list[str]:
    """The roles the run asks for (every role and every one configured where a part does
    not say), judges expanded to those configured, in `ROLES` order."""
    models = ModelRoles(config.models)
    if any(roles is None for roles in asked.values()):
        wanted = {*ROLES, *models.named()}
    else:
        wanted = {r for roles in asked.values() if roles is not None for r in roles}
    if "judge" in wanted:
        wanted |= set(models.judges())
    order = {r: i for i, r in enumerate(ROLES)}
    return sorted(wanted, key=lambda r: (order.get(_base(r), len(ROLES)), r))


def _base(role: str) -> str:
    """``judge`` for every judge role (``judge2`` ...), else the role."""
    return "judge" if role.startswith("judge") and role[5:].isdigit() else role


def model_of(role: str, config: ExperimentConfig) -> tuple[str, str]:
    """The model spec a role runs on and where it comes from (``own``, ``all``,
    ``default``)."""
    if role in config.models:
        return config.models[role], "own"
    if "all" in config.models:
        return config.models["all"], "all"
    return DEFAULT_SPEC, "default"


def _cap_of(role: str, caps: SessionCaps | None) -> tuple[int, int | None] | None:
    """A session's most calls and completion tokens of a role (judges share ``judge``'s);
    None where the caps do not name the role."""
    if caps is None:
        return None
    cap = caps.roles.get(role) or caps.roles.get(_base(role))
    return None if cap is None else (cap.calls, cap.completion_tokens)


def _estimate(
    role: str,
    config: ExperimentConfig,
    asked: dict[str, set[str] | None],
    caps: list[SessionCaps | None],
    measured: Measured | None,
) -> RoleEstimate:
    """One role's use over the run: per condition, the ``like`` run's means where it has
    the condition, else the caps; nothing under a condition none of whose parts asks for
    the role."""
    model, source = model_of(role, config)
    totals: list[float | None] = [0.0, 0.0, 0.0]
    bases: set[str] = set()
    for condition, roles in asked.items():
        mean = measured.mean(condition, role) if measured is not None else None
        if mean is not None:
            part: tuple[float | None, ...] = tuple(m * len(caps) for m in mean)
            bases.add("measured")
        elif roles is not None and _base(role) not in roles:
            continue
        else:
            part = _from_caps(role, caps)
            bases.add("caps" if part[0] is not None else "unknown")
        totals = [
            None if t is None or p is None else t + p for t, p in zip(totals, part, strict=True)
        ]
    calls, prompt, completion = (None if t is None else round(t) for t in totals)
    return RoleEstimate(
        role=role,
        model=model,
        model_from=source,
        calls=calls,
        prompt_tokens=prompt,
        completion_tokens=completion,
        basis=_basis(bases),
    )


def _from_caps(role: str, caps: list[SessionCaps | None]) -> tuple[float | None, ...]:
    """One condition's calls, prompt and completion tokens at most, from the caps (prompt
    tokens are never capped: None)."""
    calls, tokens = 0, 0
    capped = True
    for session in caps:
        cap = _cap_of(role, session)
        if cap is None:
            return None, None, None
        calls += cap[0]
        capped = capped and cap[1] is not None
        tokens += cap[1] or 0
    return float(calls), None, float(tokens) if capped else None


def _basis(bases: set[str]) -> str:
    if "unknown" in bases:
        return "unknown"
    return "+".join(b for b in ("measured", "caps") if b in bases) or "unknown"


def _differences(config: ExperimentConfig) -> list[dict[str, Any]] | None:
    cls = benchmark_class(config.benchmark)
    if not cls.paper_protocol:
        return None
    return [row.as_dict() for row in differing(cls, config)]


def with_gpu_hours(plan: RunPlan, tokens_per_s: float | None) -> RunPlan:
    """The plan with GPU-hours for its completion tokens at ``tokens_per_s``."""
    if tokens_per_s is None:
        return plan
    covered = [r for r in plan.roles if r.completion_tokens is not None]
    tokens = sum(r.completion_tokens or 0 for r in covered)
    return plan.model_copy(
        update={
            "tokens_per_s": tokens_per_s,
            "gpu_hours": round(tokens / tokens_per_s / 3600, 2) if covered else None,
            "gpu_hours_roles": [r.role for r in covered],
        }
    )
