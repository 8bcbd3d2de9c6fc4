"""The gyms by name, and a Gymnasium-compatible wrapper for RL training loops."""

from __future__ import annotations

from typing import Any

from rapport.llm import load_entry

from ._core import HORIZON, Gym

GYMS: dict[str, str] = {
    "function": "rapport.envs.gyms._function:FunctionGym",
    "telepathy": "rapport.envs.gyms._telepathy:TelepathyGym",
    "turtle": "rapport.envs.gyms._turtle:TurtleGym",
    "intention": "rapport.envs.gyms._intention:IntentionGym",
    "travel": "rapport.envs.gyms._travel:TravelGym",
    "persuade": "rapport.envs.gyms._persuade:PersuadeGym",
    "search": "rapport.envs.gyms._search:SearchGym",
    "tau": "rapport.envs.gyms._tau:TauGym",
}

EASY = frozenset({"function", "telepathy", "turtle", "intention"})
"""The gyms with easier instances at ``difficulty="easy"``."""
ANSWERED = frozenset({"function", "turtle"})
"""The gyms that take the ``answers`` rule (`AnswerRule`)."""


class UnknownGymError(ValueError):
    """A gym name that is not registered."""


def make_gym(name: str, *, horizon: int = HORIZON, split: str = "train", **options: Any) -> Gym:
    """Build a gym by name (``function``, ``telepathy`` ... ``tau``).

    Raises:
        UnknownGymError: the name is not registered.
    """
    if name not in GYMS:
        raise UnknownGymError(f"unknown gym '{name}' (known: {', '.join(GYMS)})")
    gym: Gym = load_entry(GYMS[name])(horizon=horizon, split=split, **options)
    return gym


def gymnasium_env(name: str, **options: Any) -> Any:
    """A ``gymnasium.Env`` over a gym: text observations and text actions.

    ``reset(seed=)`` returns ``(observation, info)``; ``step(text)`` returns
    ``(observation, reward, terminated, truncated, info)``. Needs the ``gym`` extra.
    """
    try:
        import gymnasium
        from gymnasium import spaces
    except ImportError as exc:  # pragma: no cover - depends on the extra
        raise ImportError(
            "gymnasium_env needs gymnasium: pip install 'rapport-toolkit[gym]'"
        ) from exc

    class TextGymEnv(gymnasium.Env):  # type: ignore[misc]
        """Gymnasium view of one rapport gym."""

        metadata: dict[str, Any] = {"render_modes": []}  # noqa: RUF012

        def __init__(self) -> None:
            self.gym = make_gym(name, **options)
            self.observation_space = spaces.Text(max_length=100_000)
            self.action_space = spaces.Text(max_length=100_000)

        def reset(
            self, *, seed: int | None = None, options: dict[str, Any] | None = None
        ) -> tuple[str, dict[str, Any]]:
            super().reset(seed=seed)
            return self.gym.reset(seed or 0), {"horizon": self.gym.horizon}

        def step(self, action: str) -> tuple[str, float, bool, bool, dict[str, Any]]:
            result = self.gym.step(action)
            truncated = bool(result.info.get("truncated", False))
            info = {**result.info, "trajectory_reward": self.gym.trajectory_reward}
            return result.observation, result.reward, result.done and not truncated, truncated, info

    return TextGymEnv()
