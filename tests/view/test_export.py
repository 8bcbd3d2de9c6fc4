"""``rapport export``: pandas reads both formats, per session and per turn."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from rapport.cli import main
from rapport.store import RunStore

from .conftest import NOTE


def test_sessions_as_jsonl_read_by_pandas(scripted_run: Path, tmp_path: Path) -> None:
    out = tmp_path / "sessions.jsonl"
    assert main(["export", str(scripted_run), "--format", "jsonl", "--out", str(out)]) == 0
    frame = pd.read_json(out, lines=True)
    assert len(frame) == 12
    assert set(frame["condition"]) == {"none", "reflection"}
    assert {"score_UE", "score_TS", "prompt_tokens_agent", "n_enforcement"} <= set(frame.columns)
    with RunStore.open_readonly(scripted_run) as store:
        stored = {(r.condition, r.user_id, r.index + 1): r.scores["UE"] for r in store.sessions()}
    got = {(r.condition, r.user_id, r.session): r.score_UE for r in frame.itertuples()}
    assert got == stored
    failed = frame[frame["status"] == "error"]
    assert len(failed) == 1 and "dropped the connection" in failed["errors"].iloc[0][0]
    first = frame.iloc[0]
    assert first["turns"][0]["speaker"] == "user" and isinstance(first["events"], list)


def test_turns_as_parquet_read_by_pandas(scripted_run: Path, tmp_path: Path) -> None:
    out = tmp_path / "turns.parquet"
    argv = ["export", str(scripted_run), "--format", "parquet", "--per", "turn"]
    assert main([*argv, "--out", str(out)]) == 0
    frame = pd.read_parquet(out)
    with RunStore.open_readonly(scripted_run) as store:
        assert len(frame) == sum(len(r.turns) for r in store.sessions())
    recalled = frame[frame["recall"] != ""]
    assert len(recalled) > 0 and (recalled["speaker"] == "agent").all()
    assert NOTE in recalled["recall"].iloc[0]
    enforced = frame[frame["enforced"].map(len) > 0]
    assert len(enforced) > 0 and (enforced["speaker"] == "user").all()


def test_export_refuses_to_overwrite_the_store(
    scripted_run: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    before = (scripted_run / "run.sqlite").read_bytes()
    argv = ["export", str(scripted_run), "--format", "jsonl"]
    assert main([*argv, "--out", str(scripted_run / "run.sqlite")]) == 2
    assert len(capsys.readouterr().err.strip().splitlines()) == 1
    assert (scripted_run / "run.sqlite").read_bytes() == before
