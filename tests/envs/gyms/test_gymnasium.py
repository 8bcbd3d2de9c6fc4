"""The Gymnasium wrapper follows the reset/step contract."""

from __future__ import annotations

import pytest

pytest.importorskip("gymnasium")

from rapport.envs.gyms import gymnasium_env


def test_reset_and_step_follow_the_gymnasium_contract() -> None:
    env = gymnasium_env("telepathy", horizon=3)
    obs, info = env.reset(seed=4)
    assert isinstance(obs, str) and info["horizon"] == 3
    target = env.gym.hidden()["entity"]
    obs, reward, terminated, truncated, info = env.step("[action] Is it alive?")
    assert obs.splitlines()[0] in {"yes", "no"} and "2 turns left" in obs
    assert reward == 0.0 and not (terminated or truncated)
    obs, reward, terminated, truncated, info = env.step(f"[answer] {target}")
    assert terminated and not truncated and reward == 1.0


def test_running_out_of_turns_is_truncation() -> None:
    env = gymnasium_env("function", horizon=2)
    env.reset(seed=0)
    env.step("[action] f(1,1,1,1)")
    *_, terminated, truncated, _info = env.step("[action] f(2,2,2,2)")
    assert truncated and not terminated
