"""`rapport train data|sft|grpo|reflect`: build the data set, train the reflection model, try it."""

from __future__ import annotations

import argparse
import asyncio
import json
from pathlib import Path
from typing import Any

from ._config import fraction, whole_number
from ._errors import UsageError, directory_path, reading_stores

_SEEDS = 0, 2**63 - 1
"""The seeds a run allows (rapport.log.ExperimentConfig.seed)."""
_EXAMPLES = 1, 1_000_000_000
"""Up to one example per session a run can hold (MAX_USERS x MAX_SESSIONS)."""
_MAX_TOKENS = 1, 1_048_576
"""The reply budgets a role's sampling allows (rapport.log.Sampling.max_tokens)."""


def register(subparsers: Any) -> None:
    """Add ``train`` and its subcommands."""
    parser = subparsers.add_parser("train", help="train the reflection model (SFT, GRPO)")
    sub = parser.add_subparsers(dest="train_command", required=True, metavar="STAGE")

    data = sub.add_parser("data", help="examples from collab run dirs, split by user")
    data.add_argument("run_dirs", nargs="+", metavar="RUN_DIR")
    data.add_argument("--out", required=True, help="output directory")
    data.add_argument("--taxonomy", default="collab")
    data.add_argument("--condition", default=None, help="only this memory condition")
    data.add_argument(
        "--targets",
        choices=["memory", "template"],
        default="memory",
        help="SFT targets: the run's memory notes (template where absent) or template",
    )
    data.add_argument("--eval-fraction", type=fraction("--eval-fraction"), default=0.2)
    data.add_argument("--seed", type=whole_number("--seed", *_SEEDS), default=0)
    data.set_defaults(handler=_data)

    for stage in ("sft", "grpo"):
        p = sub.add_parser(stage, help=f"run the {stage.upper()} stage (resumes from checkpoints)")
        p.add_argument(
            "--config", required=True, help="YAML file or packaged name (cpu-smoke, paper)"
        )
        p.add_argument("--data", default=None, help="override `data`")
        p.add_argument("--out", default=None, help="override `output_dir`")
        p.add_argument("--model", default=None, help="override the base `model`")
        p.set_defaults(handler=_stage, stage=stage)

    reflect = sub.add_parser("reflect", help="write reflections with a model and score them")
    reflect.add_argument("--model", required=True, help="model spec, e.g. transformers/DIR")
    reflect.add_argument("--data", type=Path, required=True, help="a JSONL file of examples")
    reflect.add_argument(
        "-n", type=whole_number("-n", *_EXAMPLES), default=1, help="how many examples"
    )
    reflect.add_argument(
        "--max-tokens", type=whole_number("--max-tokens", *_MAX_TOKENS), default=256
    )
    reflect.add_argument("--taxonomy", default="collab")
    reflect.set_defaults(handler=_reflect)


def _data(args: argparse.Namespace) -> int:
    from rapport.envs.collab import TaxonomyError
    from rapport.train import DatasetError, export_dataset

    run_dirs = [directory_path("RUN_DIR", text) for text in args.run_dirs]
    for run_dir in run_dirs:
        if not run_dir.is_dir():
            raise UsageError(f"no run directory '{run_dir}'")
    out = directory_path("--out", args.out)
    if out.exists() and not out.is_dir():
        raise UsageError(f"--out {out} is a file, not a directory")
    try:
        with reading_stores(*run_dirs):
            summary = export_dataset(
                run_dirs,
                out,
                taxonomy=args.taxonomy,
                condition=args.condition,
                targets=args.targets,
                eval_fraction=args.eval_fraction,
                seed=args.seed,
            )
    except (FileNotFoundError, DatasetError, TaxonomyError) as exc:
        raise UsageError(str(exc)) from exc
    print(
        f"{summary.train_examples} train / {summary.eval_examples} eval examples "
        f"({len(summary.train_users)} / {len(summary.eval_users)} users, "
        f"{summary.enforcements} enforcements, targets {summary.target_sources}) -> {args.out}"
    )
    return 0


def _stage(args: argparse.Namespace) -> int:
    from rapport.train import BaseModelError, TrainConfigError, load_config, run_grpo, run_sft

    try:
        config = load_config(
            args.config,
            data=None if args.data is None else directory_path("--data", args.data),
            output_dir=None if args.out is None else directory_path("--out", args.out),
            model=args.model,
        )
    except TrainConfigError as exc:
        raise UsageError(str(exc)) from exc
    run = run_sft if args.stage == "sft" else run_grpo
    try:
        result = run(config)
    except (FileNotFoundError, ValueError, BaseModelError) as exc:
        raise UsageError(str(exc)) from exc
    resumed = f", resumed from {result.resumed_from}" if result.resumed_from else ""
    print(f"{args.stage}: {result.steps} steps{resumed}; weights -> {result.final_dir}")
    if result.reward_curve:
        print(f"reward curve -> {result.reward_curve} (+ .png)")
    return 0


def _reflect(args: argparse.Namespace) -> int:
    from rapport.envs.collab import TaxonomyError
    from rapport.llm import ModelError
    from rapport.train import ExampleFileError

    if not args.data.is_file():
        raise UsageError(f"no data file '{args.data}'")
    try:
        rows = asyncio.run(_reflect_rows(args))
    except (ModelError, ExampleFileError, TaxonomyError) as exc:
        raise UsageError(str(exc)) from exc
    if not rows:
        raise UsageError(f"no examples in {args.data}")
    for row in rows:
        print(json.dumps(row, indent=2, ensure_ascii=False))
    return 0


async def _reflect_rows(args: argparse.Namespace) -> list[dict[str, Any]]:
    from rapport.llm import GenerateConfig, ModelRoles
    from rapport.memory import reflection_messages
    from rapport.train import (
        PreferenceMatcher,
        coverage_reward,
        format_reward,
        load_preferences,
        read_examples,
    )

    # The data and the taxonomy are checked before a model is built (that may load weights).
    examples = read_examples(args.data)[: args.n]
    matcher = PreferenceMatcher(load_preferences(args.taxonomy))
    model = ModelRoles({"memory": args.model}).get("memory")
    rows = []
    for example in examples:
        messages = reflection_messages(example.transcript, example.prior_notes)
        out = await model.generate(messages, config=GenerateConfig(max_tokens=args.max_tokens))
        rows.append(
            {
                "example": example.id,
                "enforced": example.enforced_ids,
                "reflection": out.text,
                "format_reward": format_reward(out.text),
                "coverage_reward": coverage_reward(
                    out.text, example.enforced_ids, example.known_preference_ids, matcher
                ),
                "tokens": out.usage.model_dump(),
                "latency_s": round(out.latency_s, 2),
            }
        )
    return rows
