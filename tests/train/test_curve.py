from __future__ import annotations

from rapport.train import read_reward_curve, reward_points, write_reward_curve

HISTORY = [
    {"step": 1, "reward": 0.2, "reward_std": 0.1, "rewards/reflection_coverage/mean": 0.1},
    {"step": 2, "reward": 0.5, "reward_std": 0.2, "rewards/reflection_coverage/mean": 0.4},
    {"step": 2, "train_runtime": 10.0},
]


def test_reward_curve_is_written_as_json_and_png(tmp_path):
    assert [p["reward"] for p in reward_points(HISTORY)] == [0.2, 0.5]
    path = write_reward_curve(HISTORY, tmp_path)
    assert path is not None
    assert read_reward_curve(tmp_path)[1]["rewards/reflection_coverage/mean"] == 0.4
    assert (tmp_path / "reward_curve.png").read_bytes()[:4] == b"\x89PNG"


def test_no_reward_no_curve(tmp_path):
    assert write_reward_curve([{"loss": 1.0, "step": 1}], tmp_path) is None
    assert read_reward_curve(tmp_path) == []
