"""Building a run before anything is written, and the entry points that build then run it.

`prepare_experiment` resolves the benchmark, its conditions, the models, the memories and
the users' sessions, and checks that they fit, so bad input fails with one clear error and no
run dir. `run_experiment` (and `run`, its synchronous form) prepares, then runs.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from rapport._errors import error_line
from rapport.envs import (
    Benchmark,
    apply_preset,
    conditions_for,
    create_benchmark,
    memory_options_for,
)
from rapport.llm import ModelError, ModelRoles, ResponseCache
from rapport.log import MAX_USERS, Condition, ExperimentConfig
from rapport.memory import MEMORIES, Memory, create_memory, is_memory
from rapport.store import RUN_FILE, SqliteCache, StoreError, check_run_store

from ._failures import MAX_CONSECUTIVE_FAILURES
from ._lifecycle import AgentFactory
from ._orchestrator import one_line
from ._resume import MAX_ATTEMPTS
from ._runner import Experiment, ExperimentError, RunResult


def prepare_experiment(
    config: ExperimentConfig,
    *,
    models: ModelRoles | None = None,
    agent_factory: AgentFactory | None = None,
) -> Experiment:
    """Build and check everything a run needs; writes nothing.

    Args:
        config: the experiment.
        models: model roles to use instead of those the config names (tests, notebooks).
        agent_factory: builds the agent under test from the run's model roles (once per
            session; default: `Agent` on the ``agent`` role). It must answer like `Agent`.

    Raises:
        ExperimentError: unknown benchmark or memory, bad options, a model that cannot be
            built, or benchmark data that cannot be read.
    """
    try:
        experiment = _prepare(config, models, custom_agent=agent_factory is not None)
        experiment.agent_factory = agent_factory
        return experiment
    except ExperimentError:
        raise
    except (ValueError, ModelError, ImportError, OSError, RecursionError, LookupError) as exc:
        raise ExperimentError(one_line(exc)) from exc


def _prepare(
    config: ExperimentConfig, models: ModelRoles | None, *, custom_agent: bool
) -> Experiment:
    check_run_dir(config.run_dir)
    config = apply_preset(config)
    try:
        benchmark = create_benchmark(config)
    except ValidationError as exc:
        raise ExperimentError(
            f"bad options for benchmark '{config.benchmark}': {error_line(exc)}"
        ) from exc
    config = _with_default_users(config, benchmark)
    config = config.model_copy(update={"options": effective_options(benchmark, config.options)})
    conditions = conditions_for(benchmark, config)
    names = [c.name for c in conditions]
    if len(set(names)) != len(names):
        raise ExperimentError(f"duplicate condition names: {', '.join(names)}")
    for condition in conditions:
        if not is_memory(condition.memory):
            # Checked before the models are built: building one may load weights.
            raise ExperimentError(
                f"unknown memory '{condition.memory}' (known: {', '.join(sorted(MEMORIES))})"
            )
    used = {c.memory for c in conditions}
    layered = memory_options_for(config, benchmark.protocol_memory_options(), used)
    config = config.model_copy(update={"memory_options": layered})
    unused = sorted(set(config.memory_options) - used)
    if unused:
        raise ExperimentError(
            f"memory_options for {', '.join(repr(u) for u in unused)}, which this run does not "
            f"use (its memories: {', '.join(sorted({c.memory for c in conditions}))})"
        )
    if models is None:
        cache = SqliteCache() if config.cache else None
        if cache is not None:
            cache.check()
        models = model_roles(config, cache=cache)
    models.check_names()
    memories = {c.name: _memory(c, models, config) for c in conditions}
    for memory in memories.values():
        _check_fit(memory, benchmark)
    # Only now are models built (weights joined or loaded) and servers asked.
    models.validate(None if custom_agent else roles_in_use(benchmark, memories.values()))
    users = benchmark.users(config.users, config.seed)
    sessions = {u.id: benchmark.sessions(u, config.sessions, config.seed) for u in users}
    return Experiment(config, benchmark, conditions, models, memories, users, sessions)


def model_roles(config: ExperimentConfig, *, cache: ResponseCache | None) -> ModelRoles:
    """The model roles a config names, with its seed, per-role settings and sampling (the
    one place a config becomes models: a run and the study app both build them here)."""
    return ModelRoles(
        config.models,
        seed=config.seed,
        cache=cache,
        settings=config.model_settings,
        sampling=config.sampling,
    )


def effective_options(benchmark: Benchmark, options: dict[str, Any]) -> dict[str, Any]:
    """Benchmark options as the benchmark reads them: typed, defaults included (what a run
    stores, so its report names every setting); as given where it declares no model."""
    model = type(benchmark).options_model
    if model is None:
        return dict(options)
    return model.model_validate(options).model_dump(mode="json")


def _with_default_users(config: ExperimentConfig, benchmark: Benchmark) -> ExperimentConfig:
    """The config with the benchmark's user count where the config does not give one."""
    if "users" in config.model_fields_set:
        return config
    n = benchmark.default_users()
    if n is None:
        return config
    if not 1 <= n <= MAX_USERS:
        raise ExperimentError(
            f"{config.benchmark}: its data holds {n} users; give --users N (1 to {MAX_USERS})"
        )
    return config.model_copy(update={"users": n})


def check_run_dir(run_dir: Path) -> None:
    """Refuse a run dir that cannot hold a run, before anything is written.

    Raises:
        ExperimentError: it is a file, lies under a file, cannot be written, or holds a
            ``run.sqlite`` that is not an intact rapport run store.
    """
    if run_dir.exists() and not run_dir.is_dir():
        raise ExperimentError(f"run dir {run_dir} is a file, not a directory")
    existing = run_dir
    while not existing.exists() and existing != existing.parent:
        existing = existing.parent
    if not existing.is_dir():
        raise ExperimentError(f"run dir {run_dir}: {existing} is a file, not a directory")
    if not os.access(existing, os.W_OK | os.X_OK):
        raise ExperimentError(f"run dir {run_dir}: {existing} is not writable")
    store = run_dir / RUN_FILE
    fresh = store.is_file() and store.stat().st_size == 0  # made by a lock, nothing stored
    if (store.exists() or store.is_symlink()) and not fresh:
        try:
            check_run_store(store)
        except StoreError as exc:
            raise ExperimentError(f"run dir {run_dir}: {exc}") from exc


def _memory(condition: Condition, models: ModelRoles, config: ExperimentConfig) -> Memory:
    options = config.memory_options.get(condition.memory, {})
    try:
        return create_memory(condition.memory, models, **options)
    except (TypeError, ValidationError) as exc:
        raise ExperimentError(
            f"bad options for memory '{condition.memory}': {error_line(exc)}"
        ) from exc


def roles_in_use(benchmark: Benchmark, memories: Iterable[Memory]) -> set[str] | None:
    """The model roles a run's benchmark, memories and default agent ask for; None when one
    of them does not say (its ``roles``)."""
    roles = {"agent"}
    declared = [benchmark.roles, *(m.roles for m in memories)]
    for asked in declared:
        if asked is None:
            return None
        roles.update(asked)
    return roles


def _check_fit(memory: Memory, benchmark: Benchmark) -> None:
    """Refuse a memory that needs a kind of session the benchmark does not produce."""
    needs = memory.requires
    if not needs or any(issubclass(p, needs) for p in benchmark.produces):
        return
    wanted = ", ".join(n.__name__ for n in needs)
    made = ", ".join(p.__name__ for p in benchmark.produces) or "no declared outcome"
    raise ExperimentError(
        f"memory '{memory.name}' learns from {wanted} sessions; "
        f"benchmark '{benchmark.name}' produces {made}"
    )


async def run_experiment(
    config: ExperimentConfig,
    *,
    models: ModelRoles | None = None,
    progress: bool = True,
    retry_errors: bool = True,
    max_failures: int = MAX_CONSECUTIVE_FAILURES,
    max_attempts: int = MAX_ATTEMPTS,
    agent_factory: AgentFactory | None = None,
) -> RunResult:
    """Run (or resume) an experiment; see `prepare_experiment` for what is checked first
    and `Experiment.run` for ``retry_errors``, ``max_failures`` and ``max_attempts``."""
    experiment = prepare_experiment(config, models=models, agent_factory=agent_factory)
    return await experiment.run(
        progress=progress,
        retry_errors=retry_errors,
        max_failures=max_failures,
        max_attempts=max_attempts,
    )


def run(
    config: ExperimentConfig,
    *,
    models: ModelRoles | None = None,
    progress: bool = True,
    retry_errors: bool = True,
    max_failures: int = MAX_CONSECUTIVE_FAILURES,
    max_attempts: int = MAX_ATTEMPTS,
    agent_factory: AgentFactory | None = None,
) -> RunResult:
    """Synchronous `run_experiment` for scripts and notebooks.

    Inside a running event loop (Jupyter) the run goes on a worker thread with its own
    loop, and this call waits for it.
    """
    coro = run_experiment(
        config,
        models=models,
        progress=progress,
        retry_errors=retry_errors,
        max_failures=max_failures,
        max_attempts=max_attempts,
        agent_factory=agent_factory,
    )
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coro)
    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(asyncio.run, coro).result()
