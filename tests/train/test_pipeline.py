"""SFT then GRPO on a tiny random model: the whole training path, in seconds, on CPU."""

from __future__ import annotations

import json

import pytest

from rapport.cli import main
from rapport.memory import reflection_messages
from rapport.train import (
    build_examples,
    build_tiny_model,
    load_config,
    load_preferences,
    run_grpo,
    run_sft,
    write_jsonl,
)

pytest.importorskip("trl")


def test_sft_then_grpo_then_serve_the_checkpoint(tmp_path, session, capsys):
    prefs = load_preferences("collab")
    records = [session("u1", 0, ["bullet_points"]), session("u2", 0, ["direct"])]
    examples = build_examples(records, prefs)
    write_jsonl(examples, tmp_path / "data" / "train.jsonl")
    texts = [m.content for e in examples for m in reflection_messages(e.transcript, [])]
    tiny = build_tiny_model(tmp_path / "tiny", [*texts, *(e.target or "" for e in examples)])
    config = load_config(
        "cpu-smoke", model=str(tiny), data=tmp_path / "data", output_dir=tmp_path / "out"
    )
    config.sft.max_steps = 1
    config.grpo.steps = 1
    config.grpo.max_completion_length = 8

    sft = run_sft(config)
    assert sft.steps == 1 and (sft.final_dir / "config.json").is_file()
    grpo = run_grpo(config)  # starts from the SFT weights
    assert grpo.steps == 1 and grpo.reward_curve is not None
    assert grpo.started_from == str(sft.final_dir)
    points = json.loads(grpo.reward_curve.read_text())["points"]
    assert 0.0 <= points[0]["reward"] <= 1.2

    config.grpo.steps = 2
    again = run_grpo(config)
    assert again.resumed_from is not None and again.steps == 2

    capsys.readouterr()  # drop the trainers' progress output
    code = main(
        [
            "train",
            "reflect",
            "--model",
            f"transformers/{again.final_dir}",
            "--data",
            str(tmp_path / "data" / "train.jsonl"),
            "-n",
            "1",
            "--max-tokens",
            "6",
        ]
    )
    assert code == 0
    row = json.loads(capsys.readouterr().out)
    assert row["tokens"]["completion_tokens"] > 0
    assert 0.0 <= row["coverage_reward"] <= 1.0


def test_lora_training_saves_merged_weights(tmp_path, session):
    prefs = load_preferences("collab")
    examples = build_examples([session("u1", 0, ["direct"])], prefs)
    write_jsonl(examples, tmp_path / "data" / "train.jsonl")
    texts = [m.content for e in examples for m in reflection_messages(e.transcript, [])]
    tiny = build_tiny_model(tmp_path / "tiny", [*texts, examples[0].target or ""])
    config = load_config(
        "cpu-smoke", model=str(tiny), data=tmp_path / "data", output_dir=tmp_path / "out"
    )
    config.lora.enabled = True
    config.sft.max_steps = 1
    config.grpo.steps = 1
    config.grpo.max_completion_length = 8
    run_sft(config)
    result = run_grpo(config)
    saved = json.loads((result.final_dir / "config.json").read_text())
    assert saved["model_type"] == "llama"
    assert not (result.final_dir / "adapter_config.json").exists()
