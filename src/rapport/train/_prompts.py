"""Examples as TRL data sets (conversational prompts fitted to a token budget)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ._data import ReflectionExample


def reflection_prompt(example: ReflectionExample, tokenizer: Any, max_tokens: int) -> list[dict]:
    """The reflection prompt as chat messages, oldest transcript lines dropped to fit.

    The reflection format's own prompt (`rapport.memory.reflection_messages`) is used, so a
    trained model sees exactly what the ``reflection`` memory will show it.
    """
    from rapport.memory import reflection_messages

    lines = example.transcript.splitlines()
    keep = len(lines)
    while True:
        transcript = "\n".join(lines[len(lines) - keep :])
        if keep < len(lines):
            transcript = "[earlier turns omitted]\n" + transcript
        messages = [
            {"role": m.role, "content": m.content}
            for m in reflection_messages(transcript, example.prior_notes, pushback=True)
        ]
        if keep <= 1 or prompt_tokens(messages, tokenizer) <= max_tokens:
            return messages
        keep = max(1, int(keep * 0.8))


def prompt_tokens(messages: list[dict], tokenizer: Any) -> int:
    """How many tokens the chat template makes of these messages (generation prompt added)."""
    ids = tokenizer.apply_chat_template(messages, add_generation_prompt=True, tokenize=True)
    if isinstance(ids, dict) or hasattr(ids, "keys"):
        ids = ids["input_ids"]
    return len(ids)


def sft_dataset(examples: Sequence[ReflectionExample], tokenizer: Any, max_tokens: int) -> Any:
    """Prompt-completion rows (the loss covers the target reflection only)."""
    from datasets import Dataset

    rows = [
        {
            "prompt": reflection_prompt(e, tokenizer, max_tokens),
            "completion": [{"role": "assistant", "content": e.target}],
        }
        for e in examples
        if e.target
    ]
    return Dataset.from_list(rows)


def grpo_dataset(examples: Sequence[ReflectionExample], tokenizer: Any, max_tokens: int) -> Any:
    """Prompt rows with the ground truth the reward functions read as extra columns."""
    from datasets import Dataset

    rows = [
        {
            "prompt": reflection_prompt(e, tokenizer, max_tokens),
            "example_id": e.id,
            "enforced_ids": e.enforced_ids,
            "known_ids": e.known_preference_ids,
            "enforced_json": [x.model_dump_json() for x in e.enforced],
            "prior_notes": e.prior_notes,
        }
        for e in examples
    ]
    return Dataset.from_list(rows)
