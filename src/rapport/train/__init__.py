"""Training the reflection model: data from run logs, rewards, SFT and GRPO with TRL.

Needs the ``train`` extra (torch, transformers, trl, peft, datasets, accelerate); the data
and reward code runs without it.
"""

from ._base import (
    SHIPPED_GGUF,
    BaseModelError,
    load_model_and_tokenizer,
    materialize_gguf,
    resolve_base_model,
)
from ._config import (
    GRPOSettings,
    LoraSettings,
    SFTSettings,
    TrainConfig,
    TrainConfigError,
    load_config,
    packaged_configs,
)
from ._curve import read_reward_curve, reward_points, write_reward_curve
from ._data import (
    EnforcedPreference,
    ExampleFileError,
    ReflectionExample,
    build_examples,
    enforced_preferences,
    load_preferences,
    memory_notes_of,
    read_examples,
    render_reflection,
    split_by_user,
    template_note,
    template_reflection,
    write_jsonl,
)
from ._export import DatasetError, DatasetSummary, collect_examples, export_dataset
from ._judge import JudgeReward, ReflectionJudgement, judgement_score
from ._rewards import PreferenceMatcher, coverage_reward, coverage_score, format_reward
from ._tiny import build_tiny_model
from ._trainers import StageResult, grpo_start, last_checkpoint, run_grpo, run_sft
from ._trl_rewards import make_reward_funcs

__all__ = [
    "SHIPPED_GGUF",
    "BaseModelError",
    "DatasetError",
    "DatasetSummary",
    "EnforcedPreference",
    "ExampleFileError",
    "GRPOSettings",
    "JudgeReward",
    "LoraSettings",
    "PreferenceMatcher",
    "ReflectionExample",
    "ReflectionJudgement",
    "SFTSettings",
    "StageResult",
    "TrainConfig",
    "TrainConfigError",
    "build_examples",
    "build_tiny_model",
    "collect_examples",
    "coverage_reward",
    "coverage_score",
    "enforced_preferences",
    "export_dataset",
    "format_reward",
    "grpo_start",
    "judgement_score",
    "last_checkpoint",
    "load_config",
    "load_model_and_tokenizer",
    "load_preferences",
    "make_reward_funcs",
    "materialize_gguf",
    "memory_notes_of",
    "packaged_configs",
    "read_examples",
    "read_reward_curve",
    "render_reflection",
    "resolve_base_model",
    "reward_points",
    "run_grpo",
    "run_sft",
    "split_by_user",
    "template_note",
    "template_reflection",
    "write_jsonl",
    "write_reward_curve",
]
