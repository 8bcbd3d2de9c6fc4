from __future__ import annotations

import pytest

from rapport.cli import main
from rapport.train import TrainConfigError, load_config, packaged_configs


def test_paper_config_holds_the_papers_numbers():
    config = load_config("paper")
    g = config.grpo
    assert (g.prompts_per_step, g.num_generations, g.beta) == (64, 8, 0.003)
    assert (g.max_prompt_length, g.max_completion_length, g.steps) == (2048, 1024, 200)
    assert (config.sft.epochs, config.sft.max_length) == (4, 32768)
    launch_processes = 4  # docs/training.md's launch
    assert config.sft.batch_size * config.sft.grad_accum * launch_processes == 64  # Table 4
    assert g.judge_model is not None and "Llama-3.3-70B-Instruct" in g.judge_model  # §5


def test_packaged_configs_and_overrides(tmp_path):
    assert {"cpu-smoke", "paper"} <= set(packaged_configs())
    config = load_config("cpu-smoke", output_dir=tmp_path, model=None)
    assert config.output_dir == tmp_path
    assert config.model == "smollm2-135m"


@pytest.mark.parametrize(
    ("text", "message"),
    [("grpo: [1", "bad YAML"), ("grpo:\n  beta: -1\n", "grpo.beta"), ("epochs: 3\n", "epochs")],
)
def test_bad_configs_fail_in_one_line(tmp_path, text, message):
    path = tmp_path / "c.yaml"
    path.write_text(text)
    with pytest.raises(TrainConfigError, match=message):
        load_config(path)


def test_cli_reports_a_missing_config_and_missing_data(tmp_path, capsys):
    assert main(["train", "sft", "--config", str(tmp_path / "none.yaml")]) == 2
    assert "no config file" in capsys.readouterr().err
    code = main(
        [
            "train",
            "grpo",
            "--config",
            "cpu-smoke",
            "--data",
            str(tmp_path / "empty"),
            "--out",
            str(tmp_path / "out"),
        ]
    )
    assert code == 2
    assert "rapport train data" in capsys.readouterr().err


def test_a_config_file_that_is_not_utf_8_is_a_config_error(tmp_path):
    path = tmp_path / "bad.yaml"
    path.write_bytes(b"\xff\xfe\x00model: x\n")
    with pytest.raises(TrainConfigError, match="cannot read config file"):
        load_config(path)
