"""The two training stages with TRL: SFT cold start, then GRPO on the reflection rewards.

Both write checkpoints under their stage directory, resume from the last one when run
again, and save the final weights (LoRA adapters merged) to ``final/``, which the
``transformers`` provider loads as ``transformers/OUTPUT_DIR/grpo/final``.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, cast

from pydantic import BaseModel

from ._base import load_model_and_tokenizer, require_training_stack
from ._config import TrainConfig
from ._curve import write_reward_curve
from ._data import load_preferences, read_examples
from ._export import TRAIN_FILE
from ._prompts import grpo_dataset, sft_dataset
from ._trl_rewards import make_reward_funcs

FINAL = "final"


class StageResult(BaseModel):
    """What a stage produced."""

    stage: str
    started_from: str
    """The weights the stage started from."""
    final_dir: Path
    steps: int
    resumed_from: str | None = None
    reward_curve: Path | None = None
    last_log: dict[str, Any] = {}


def last_checkpoint(stage_dir: Path) -> str | None:
    """The newest ``checkpoint-N`` directory of a stage, if any."""
    if not stage_dir.is_dir():
        return None
    from transformers.trainer_utils import get_last_checkpoint

    found: str | None = get_last_checkpoint(str(stage_dir))
    return found


def _world_size() -> int:
    return int(os.environ.get("WORLD_SIZE", "1"))


def _common_args(config: TrainConfig, out: Path) -> dict[str, Any]:
    extra = {"gradient_checkpointing": True} if config.gradient_checkpointing else {}
    return {
        **extra,
        "output_dir": str(out),
        "logging_steps": config.logging_steps,
        "save_strategy": "steps",
        "save_steps": config.save_steps,
        "save_total_limit": config.save_total_limit,
        "report_to": "none",
        "seed": config.seed,
        "bf16": config.bf16,
        "deepspeed": config.deepspeed,
        "dataloader_num_workers": 0,
    }


def _peft_config(config: TrainConfig) -> Any:
    if not config.lora.enabled:
        return None
    from peft import LoraConfig

    return LoraConfig(
        r=config.lora.r,
        lora_alpha=config.lora.alpha,
        lora_dropout=config.lora.dropout,
        target_modules=config.lora.target_modules,
        task_type="CAUSAL_LM",
    )


def _train_examples(config: TrainConfig) -> list[Any]:
    path = config.data / TRAIN_FILE
    if not path.is_file():
        raise FileNotFoundError(f"no training data at {path} (run `rapport train data` first)")
    return read_examples(path)


def _finish(
    trainer: Any, tokenizer: Any, stage: str, start: str, out: Path, resumed: str | None
) -> StageResult:
    final = out / FINAL
    model = trainer.model
    if hasattr(model, "merge_and_unload"):  # LoRA: ship full weights the provider can load
        model = model.merge_and_unload()
    if trainer.accelerator.is_main_process:
        model.save_pretrained(final)
        tokenizer.save_pretrained(final)
    history = list(trainer.state.log_history)
    curve = write_reward_curve(history, out) if stage == "grpo" else None
    result = StageResult(
        stage=stage,
        started_from=start,
        final_dir=final,
        steps=trainer.state.global_step,
        resumed_from=resumed,
        reward_curve=curve,
        last_log=next((h for h in reversed(history) if "loss" in h or "reward" in h), {}),
    )
    (out / "result.json").write_text(json.dumps(result.model_dump(mode="json"), indent=2))
    (out / "log_history.json").write_text(json.dumps(history, indent=2))
    return result


def run_sft(config: TrainConfig) -> StageResult:
    """Supervised cold start on the examples' target reflections."""
    examples = _train_examples(config)
    require_training_stack()
    from trl import SFTConfig, SFTTrainer

    out = config.sft_dir
    model, tokenizer = load_model_and_tokenizer(config.model)
    data = sft_dataset(examples, tokenizer, config.sft.max_length)
    args = SFTConfig(
        **_common_args(config, out),
        num_train_epochs=config.sft.epochs,
        max_steps=config.sft.max_steps,
        max_length=config.sft.max_length,
        learning_rate=config.sft.learning_rate,
        per_device_train_batch_size=config.sft.batch_size,
        gradient_accumulation_steps=config.sft.grad_accum,
        packing=False,
    )
    trainer = SFTTrainer(
        model=model,
        args=args,
        train_dataset=data,
        processing_class=tokenizer,
        peft_config=_peft_config(config),
    )
    resumed = last_checkpoint(out)
    trainer.train(resume_from_checkpoint=resumed)
    return _finish(trainer, tokenizer, "sft", config.model, out, resumed)


def grpo_start(config: TrainConfig) -> str:
    """The weights GRPO starts from: the explicit setting, the SFT result, or the base."""
    if config.grpo.start_from:
        return config.grpo.start_from
    sft_final = config.sft_dir / FINAL
    return str(sft_final) if (sft_final / "config.json").is_file() else config.model


def _grad_accum(config: TrainConfig) -> int:
    g = config.grpo
    completions = g.prompts_per_step * g.num_generations
    per_pass = g.batch_size * _world_size()
    if completions % per_pass:
        raise ValueError(
            f"prompts_per_step * num_generations ({completions}) must be a multiple of "
            f"batch_size * processes ({per_pass})"
        )
    return completions // per_pass


def _judge_model(config: TrainConfig) -> Any:
    if not config.grpo.judge_model or not config.grpo.rewards.get("judge"):
        return None
    from rapport.llm import ModelRoles

    return ModelRoles({"judge": config.grpo.judge_model}, seed=config.seed).get("judge")


def run_grpo(config: TrainConfig) -> StageResult:
    """GRPO on the weighted reflection rewards; writes the reward curve (JSON + PNG)."""
    examples = _train_examples(config)
    require_training_stack()
    from trl import GRPOConfig, GRPOTrainer

    g, out = config.grpo, config.grpo_dir
    start = grpo_start(config)
    model, tokenizer = load_model_and_tokenizer(start)
    data = grpo_dataset(examples, tokenizer, g.max_prompt_length)
    funcs, weights = make_reward_funcs(
        g.rewards, load_preferences(config.taxonomy), _judge_model(config)
    )
    vllm: dict[str, Any] = {"use_vllm": True, "vllm_mode": g.vllm_mode} if g.use_vllm else {}
    args = GRPOConfig(
        **_common_args(config, out),
        **vllm,
        max_steps=g.steps,
        learning_rate=g.learning_rate,
        per_device_train_batch_size=g.batch_size,
        gradient_accumulation_steps=_grad_accum(config),
        num_generations=g.num_generations,
        max_completion_length=g.max_completion_length,
        beta=g.beta,
        temperature=g.temperature,
        reward_weights=weights,
    )
    trainer = GRPOTrainer(
        model=model,
        reward_funcs=cast(list[Any], funcs),
        args=args,
        train_dataset=data,
        processing_class=tokenizer,
        peft_config=_peft_config(config),
    )
    resumed = last_checkpoint(out)
    trainer.train(resume_from_checkpoint=resumed)
    return _finish(trainer, tokenizer, "grpo", start, out, resumed)
