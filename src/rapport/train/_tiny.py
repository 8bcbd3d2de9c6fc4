"""A tiny randomly initialised causal LM with a word-level tokenizer, for tests and dry runs.

It exercises the same code paths as a real checkpoint (chat template, generation, SFT and
GRPO steps, save and reload) in seconds; it writes nothing sensible.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path

from ._base import require_training_stack

CHATML = (
    "{% for message in messages %}<|im_start|>{{ message['role'] }}\n"
    "{{ message['content'] }}<|im_end|>\n{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)
_SPECIAL = ["<pad>", "<unk>", "<|im_start|>", "<|im_end|>"]


def build_tiny_model(out: Path, texts: Iterable[str], *, layers: int = 2, hidden: int = 32) -> Path:
    """Write a tiny Llama-shaped model whose vocabulary is the words and symbols of `texts`."""
    require_training_stack()
    import torch
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers
    from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

    words = sorted({w for t in texts for w in re.findall(r"\w+|[^\w\s]", t)})
    vocab = {tok: i for i, tok in enumerate([*_SPECIAL, "\n", *words])}
    backend = Tokenizer(models.WordLevel(vocab, unk_token="<unk>"))
    backend.pre_tokenizer = pre_tokenizers.Sequence(
        [pre_tokenizers.Split("\n", "isolated"), pre_tokenizers.Whitespace()]
    )
    backend.decoder = decoders.WordPiece(prefix="##")  # joins word tokens with spaces
    tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=backend,
        unk_token="<unk>",
        pad_token="<pad>",
        eos_token="<|im_end|>",
        bos_token="<|im_start|>",
        additional_special_tokens=["<|im_start|>"],
    )
    tokenizer.chat_template = CHATML
    torch.manual_seed(0)
    config = LlamaConfig(
        vocab_size=len(vocab),
        hidden_size=hidden,
        intermediate_size=hidden * 2,
        num_hidden_layers=layers,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=4096,
        pad_token_id=vocab["<pad>"],
        eos_token_id=vocab["<|im_end|>"],
        bos_token_id=vocab["<|im_start|>"],
        tie_word_embeddings=True,
    )
    LlamaForCausalLM(config).save_pretrained(out)
    tokenizer.save_pretrained(out)
    return out
