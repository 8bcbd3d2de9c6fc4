"""llama.cpp options given in the model spec (no model is loaded)."""

from __future__ import annotations

from pathlib import Path

import pytest

from rapport.llm import ModelError
from rapport.llm._llamacpp import LlamaCppAPI


def _gguf(tmp_path: Path) -> str:
    path = tmp_path / "tiny.gguf"
    path.write_bytes(b"GGUF" + b"\0" * 16)
    return str(path)


def test_options_in_the_spec_set_the_context_and_keep_the_name(tmp_path: Path) -> None:
    api = LlamaCppAPI.from_spec(f"{_gguf(tmp_path)}?n_ctx=16384&n_threads=1")
    assert (api.n_ctx, api.n_threads) == (16384, 1)
    assert api.name == f"llamacpp/{_gguf(tmp_path)}"
    assert LlamaCppAPI.from_spec(_gguf(tmp_path)).n_ctx == 8192


def test_an_unknown_or_malformed_spec_option_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ModelError, match="unknown llamacpp options: seed"):
        LlamaCppAPI.from_spec(f"{_gguf(tmp_path)}?seed=3")
    with pytest.raises(ModelError, match="WHOLE_NUMBER"):
        LlamaCppAPI.from_spec(f"{_gguf(tmp_path)}?n_ctx=big")


def test_the_run_description_names_the_embedded_weights_behind_spec_options() -> None:
    from rapport.eval._provenance import describe_spec

    plain = describe_spec("agent", "llamacpp/qwen2.5-coder-0.5b")
    wider = describe_spec("agent", "llamacpp/qwen2.5-coder-0.5b?n_ctx=16384")
    assert wider.sha256 == plain.sha256 and wider.sha256
    assert wider.spec.endswith("?n_ctx=16384")


def test_a_stored_run_names_weights_relative_to_the_models_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from rapport.eval._provenance import shown_path

    models = tmp_path / "models"
    models.mkdir()
    monkeypatch.setenv("RAPPORT_MODELS", str(models))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert shown_path(models / "qwen.gguf") == "$RAPPORT_MODELS/qwen.gguf"
    assert shown_path(tmp_path / "home" / "w" / "q.gguf") == "~/w/q.gguf"
    assert shown_path(tmp_path / "elsewhere.gguf") == str(tmp_path / "elsewhere.gguf")
