"""The shared embedder: unit rows, determinism, and similarity that means something."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from rapport.memory import HashingEmbedder, get_embedder
from rapport.memory._embed import SentenceTransformerEmbedder, minilm_path


def test_hashing_rows_are_unit_float32_and_deterministic() -> None:
    emb = get_embedder("hashing")
    assert emb.name == "hashing"
    a = emb.encode(["cheap compact car", "a quiet hotel room", ""])
    assert a.dtype == np.float32 and a.shape == (3, HashingEmbedder().dim)
    assert np.allclose(np.linalg.norm(a[:2], axis=1), 1.0) and not a[2].any()
    assert np.array_equal(
        a, HashingEmbedder().encode(["cheap compact car", "a quiet hotel room", ""])
    )


def test_hashing_similarity_prefers_shared_words() -> None:
    q, near, far = get_embedder("hashing").encode(
        ["rent a compact car", "a compact rental car please", "vegan dinner for four"]
    )
    assert q @ near > q @ far


def test_unknown_name_is_rejected() -> None:
    with pytest.raises(ValueError, match="unknown embedder"):
        get_embedder("nope")


@pytest.mark.skipif(minilm_path() is None, reason="the embeddings extra is not installed")
def test_minilm_from_the_installed_package() -> None:
    emb = get_embedder("auto")
    assert emb.name == "all-MiniLM-L6-v2"
    q, near, far = emb.encode(["cheap flights", "low-cost airline tickets", "a jazz concert"])
    assert q.shape == (384,) and abs(float(np.linalg.norm(q)) - 1.0) < 1e-4
    assert q @ near > q @ far


@pytest.mark.skipif(minilm_path() is None, reason="the embeddings extra is not installed")
def test_minilm_query_path_matches_batch_encoding() -> None:
    emb = get_embedder("auto")
    texts = ["a window seat on the morning train", "cheap compact car", "vegan dinner for two"]
    batch = emb.encode(texts * 3)  # more than a query batch: sentence-transformers' encode
    for i, text in enumerate(texts):
        [row] = emb.encode([text])  # the direct single-thread path
        assert row.dtype == np.float32 and np.allclose(row, batch[i], atol=1e-5)


@pytest.mark.skipif(minilm_path() is None, reason="the embeddings extra is not installed")
def test_minilm_queries_run_on_the_checked_onnx_export() -> None:
    emb = get_embedder("auto")
    assert getattr(emb, "_onnx", None) is not None, "the embeddings extra ships onnxruntime"
    text = "a quiet hotel near the station"
    [onnx_row] = emb.encode([text])
    emb_onnx, emb._onnx = emb._onnx, None  # type: ignore[attr-defined]
    try:
        [torch_row] = emb.encode([text])
    finally:
        emb._onnx = emb_onnx  # type: ignore[attr-defined]
    assert np.allclose(onnx_row, torch_row, atol=1e-5)


@pytest.mark.skipif(minilm_path() is None, reason="the embeddings extra is not installed")
def test_a_new_home_exports_and_uses_onnx_on_its_first_load(rapport_home: Path) -> None:
    from rapport.memory._embed import SentenceTransformerEmbedder

    path = minilm_path()
    assert path is not None
    assert not (rapport_home / "embeddings").exists()
    emb = SentenceTransformerEmbedder(path)
    assert list((rapport_home / "embeddings").glob("*.onnx")), "exported in this process"
    assert emb.backend == "onnx"
    bert = emb._model[0].auto_model
    assert bert.training is False, "the export leaves the model in the mode it found it"


@pytest.mark.skipif(minilm_path() is None, reason="the embeddings extra is not installed")
def test_models_embedder_names_the_pass_queries_run_on(capsys: pytest.CaptureFixture[str]) -> None:
    from rapport.cli import main

    assert main(["models", "embedder"]) == 0
    assert capsys.readouterr().out.strip() == "all-MiniLM-L6-v2: onnx"


@pytest.mark.skipif(minilm_path() is None, reason="the embeddings extra is not installed")
def test_loading_minilm_draws_no_progress_bar(capfd: pytest.CaptureFixture[str]) -> None:
    from transformers.utils import logging as hf_logging

    path = minilm_path()
    assert path is not None
    capfd.readouterr()
    SentenceTransformerEmbedder(path)
    err = capfd.readouterr().err
    assert "\r" not in err and "Loading weights" not in err
    assert hf_logging.is_progress_bar_enabled()  # left as it was found
