"""Training curves from the trainer's log history: JSON and a PNG next to the checkpoints."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

CURVE_JSON = "reward_curve.json"
CURVE_PNG = "reward_curve.png"


def reward_points(log_history: Sequence[dict[str, Any]]) -> list[dict[str, float]]:
    """One point per logged step: the mean reward, its spread and each reward's mean."""
    points: list[dict[str, float]] = []
    for entry in log_history:
        if "reward" not in entry:
            continue
        point = {"step": float(entry.get("step", len(points) + 1)), "reward": entry["reward"]}
        for key, value in entry.items():
            if key == "reward_std" or (key.startswith("rewards/") and key.endswith("/mean")):
                point[key] = value
        for key in ("kl", "loss", "completions/mean_length"):
            if key in entry:
                point[key] = entry[key]
        points.append(point)
    return points


def write_reward_curve(log_history: Sequence[dict[str, Any]], out_dir: Path) -> Path | None:
    """Write ``reward_curve.json`` (and ``.png``); returns the JSON path, None if no reward."""
    points = reward_points(log_history)
    if not points:
        return None
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / CURVE_JSON
    path.write_text(json.dumps({"points": points}, indent=2))
    plot_reward_curve(points, out_dir / CURVE_PNG)
    return path


def read_reward_curve(out_dir: Path) -> list[dict[str, float]]:
    """The points of a written curve ([] when there is none)."""
    path = out_dir / CURVE_JSON
    return list(json.loads(path.read_text())["points"]) if path.is_file() else []


def plot_reward_curve(points: Sequence[dict[str, float]], path: Path) -> None:
    """Mean reward per step with its spread, and each reward's mean."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    steps = [p["step"] for p in points]
    fig, ax = plt.subplots(figsize=(6, 3.5))
    mean = [p["reward"] for p in points]
    ax.plot(steps, mean, marker="o", label="reward (weighted sum)")
    if all("reward_std" in p for p in points):
        low = [m - p["reward_std"] for m, p in zip(mean, points, strict=True)]
        high = [m + p["reward_std"] for m, p in zip(mean, points, strict=True)]
        ax.fill_between(steps, low, high, alpha=0.2)
    for key in sorted({k for p in points for k in p if k.startswith("rewards/")}):
        ax.plot(
            steps,
            [p.get(key, float("nan")) for p in points],
            linestyle="--",
            label=key.split("/")[1],
        )
    from matplotlib.ticker import MaxNLocator

    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_xlabel("GRPO step")
    ax.set_ylabel("reward")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
