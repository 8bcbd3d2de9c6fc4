from __future__ import annotations

import json
from pathlib import Path

import pytest

from rapport.cli import main


def test_list_shows_every_embedded_model_and_whether_it_is_joined(
    own_models: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["models", "list", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert [r["spec"] for r in rows] == [
        "llamacpp/qwen2.5-coder-1.5b",
        "llamacpp/qwen2.5-coder-0.5b",
    ]
    assert not any(r["joined"] for r in rows)
    assert rows[0]["path"] == str(own_models / "models" / "qwen2.5-coder-1.5b.gguf")


def test_verify_fails_with_exit_2_when_a_model_is_missing(
    own_models: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["models", "verify"]) == 2
    out = capsys.readouterr().out
    assert "FAILED" in out and "is missing" in out and "rapport models install" in out


def test_serve_model_refuses_a_non_llamacpp_spec(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["serve-model", "--model", "openai/gpt-4o", "--port", "0"]) == 2
    assert "llamacpp/" in capsys.readouterr().err
