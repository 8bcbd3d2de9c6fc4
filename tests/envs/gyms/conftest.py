"""A UserRL-layout checkout with our own content, its parquet split files written per test."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import yaml

HERE = Path(__file__).parent


def write_checkout(target: Path) -> Path:
    """Copy ``userrl_checkout`` to ``target`` and write its split files from the rows."""
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    shutil.copytree(HERE / "userrl_checkout", target)
    rows = yaml.safe_load((HERE / "userrl_rows.yaml").read_text(encoding="utf-8"))
    for folder, splits in rows.items():
        (target / "data" / folder).mkdir(parents=True)
        for split, tasks in splits.items():
            table = pa.table(
                {
                    "data_source": [f"interact_{folder}"] * len(tasks),
                    "reward_model": tasks,
                    "extra_info": [{"index": i, "split": split} for i in range(len(tasks))],
                }
            )
            pq.write_table(table, target / "data" / folder / f"{split}.parquet")
    return target


@pytest.fixture
def userrl_checkout(tmp_path: Path) -> Path:
    """A fresh copy of the test checkout, parquet files included."""
    return write_checkout(tmp_path / "UserRL")
