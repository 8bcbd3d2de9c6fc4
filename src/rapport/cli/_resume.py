"""``rapport resume RUN_DIR``: run the rest of a stopped run with the config it stored.

Only what leaves results as they are may change: where a role's model is served
(``--model ROLE=SPEC,base_url=URL``, the same spec), ``--concurrency``, ``--no-cache``, and
how error sessions are retried.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from rapport.eval import ExperimentConfig
from rapport.log import Sampling
from rapport.report import is_run_dir
from rapport.store import RunStore, config_differences

from ._config import parse_models, whole_number
from ._errors import UsageError, directory_path, reading_stores
from ._run import add_resume_flags, execute, prepare, resume_options


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``resume`` command."""
    parser = subparsers.add_parser(
        "resume",
        help="run the rest of a stopped run, with the config its run dir stores",
        description="Run the sessions a run dir does not hold yet, with the config the run "
        "was started with (no need to retype the command). Only where a model is served "
        "(--model ROLE=SPEC,base_url=URL with the run's own spec), --concurrency and "
        "--no-cache may change.",
    )
    parser.add_argument("run_dir", metavar="RUN_DIR", help="the run dir (runs/latest ...)")
    parser.add_argument(
        "--model",
        metavar="ROLE=SPEC,KEY=VALUE",
        action="append",
        default=[],
        help="a role's server settings (base_url, api_key_env, timeout ...) after its stored "
        "spec; repeatable",
    )
    parser.add_argument(
        "--concurrency",
        metavar="K",
        type=whole_number("--concurrency", 1, 1024),
        help="users run in parallel (default: the run's)",
    )
    parser.add_argument(
        "--no-cache", action="store_true", help="do not use the shared response cache"
    )
    parser.add_argument("--no-progress", action="store_true", help="hide the progress bar")
    add_resume_flags(parser)
    parser.set_defaults(handler=handle)


def stored_config(run_dir: Path) -> ExperimentConfig:
    """The config the run in `run_dir` was started with.

    Raises:
        UsageError: no run there.
    """
    if not is_run_dir(run_dir):
        raise UsageError(f"no run found in {run_dir} (no run.sqlite in it)")
    with reading_stores(run_dir), RunStore.open_readonly(run_dir) as store:
        run = store.run_or_none()
    if run is None:
        raise UsageError(f"no run found in {run_dir} (its store holds no run header)")
    return run.config


def resumed_config(
    stored: ExperimentConfig,
    run_dir: Path,
    *,
    models: Sequence[str] = (),
    concurrency: int | None = None,
    cache: bool = True,
) -> ExperimentConfig:
    """`stored` on `run_dir`, with the given roles' server settings, concurrency and cache.

    Raises:
        UsageError: a ``--model`` that changes a role's spec or sampling.
    """
    data = stored.model_dump(mode="json", exclude_none=True)
    data.update(run_dir=str(run_dir), cache=cache and stored.cache)
    if concurrency is not None:
        data["concurrency"] = concurrency
    settings = data.setdefault("model_settings", {})
    for role, entry in parse_models(models).items():
        settings[role] = {**settings.get(role, {}), **_server_settings(stored, role, entry)}
    config = ExperimentConfig.model_validate(data)
    diffs = config_differences(stored, config)
    if diffs:  # the checks above leave none; the store would refuse them
        raise UsageError(f"resume cannot change the run's config ({'; '.join(diffs)})")
    return config


def _server_settings(stored: ExperimentConfig, role: str, entry: Any) -> dict[str, Any]:
    """A ``--model`` entry's server settings, once its spec is checked against the run's."""
    spec = entry if isinstance(entry, str) else entry["spec"]
    own = stored.models.get(role) or stored.models.get("all")
    if own is not None and spec != own:
        raise UsageError(
            f"resume keeps the run's models: {role} is {own}, not {spec} "
            f"(--model {role}={own},base_url=URL moves its server)"
        )
    settings = {} if isinstance(entry, str) else dict(entry)
    sampling = sorted(set(settings) & set(Sampling.model_fields))
    if sampling:
        raise UsageError(
            f"resume keeps the run's sampling: {', '.join(sampling)} of {role} cannot change"
        )
    return {**settings, "spec": spec}


def handle(args: argparse.Namespace) -> int:
    """Run the command."""
    run_dir = directory_path("RUN_DIR", args.run_dir)
    config = resumed_config(
        stored_config(run_dir),
        run_dir,
        models=args.model,
        concurrency=args.concurrency,
        cache=not args.no_cache,
    )
    return execute(prepare(config), progress=not args.no_progress, **resume_options(args))
