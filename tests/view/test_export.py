"""``rapport export``: pandas reads both formats, per session and per turn."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from rapport.cli import main
from rapport.store import RunStore

from .conftest import NOTE, make_run


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


def test_every_row_names_its_run_so_exports_of_runs_concatenate(
    scripted_run: Path, tmp_path: Path
) -> None:
    other = make_run(tmp_path / "other", users=1, sessions=2, fail_at=None)
    frames = []
    for run_dir in (scripted_run, other):
        out = tmp_path / f"{run_dir.name}.parquet"
        assert main(["export", str(run_dir), "--format", "parquet", "--out", str(out)]) == 0
        frames.append(pd.read_parquet(out))
    both = pd.concat(frames, ignore_index=True)
    assert len(both) == 12 + 4
    with RunStore.open_readonly(scripted_run) as a, RunStore.open_readonly(other) as b:
        ids = {a.run().id: 12, b.run().id: 4}
    assert both.groupby("run_id").size().to_dict() == ids
    assert set(both["benchmark"]) == {"collab"}
    assert set(both["model_agent"]) == {"scripted/agent"}
    assert set(both["model_memory"]) == {"scripted/memory"}
    assert set(both["seed"]) == {0}


def test_parquet_counts_are_zero_where_a_session_has_none(
    scripted_run: Path, tmp_path: Path
) -> None:
    out = tmp_path / "sessions.parquet"
    assert main(["export", str(scripted_run), "--format", "parquet", "--out", str(out)]) == 0
    frame = pd.read_parquet(out)
    # Only reflection sessions recall, put memory in the prompt and call the memory model.
    for column in ("n_recall", "n_context", "calls_memory", "prompt_tokens_memory"):
        assert pd.api.types.is_integer_dtype(frame[column]), column
        assert not frame[column].isna().any(), column
        plain = frame.loc[frame["condition"] == "none", column]
        assert (plain == 0).all(), column
        assert frame.loc[frame["condition"] == "reflection", column].sum() > 0, column


def test_load_gives_the_export_rows_as_dataframes(scripted_run: Path, tmp_path: Path) -> None:
    import rapport

    tables = rapport.load(scripted_run)
    out = tmp_path / "sessions.jsonl"
    assert main(["export", str(scripted_run), "--format", "jsonl", "--out", str(out)]) == 0
    exported = pd.read_json(out, lines=True)
    assert list(tables.sessions.columns) == list(exported.columns)
    assert tables.sessions["score_UE"].tolist() == exported["score_UE"].tolist()
    with RunStore.open_readonly(scripted_run) as store:
        assert len(tables.turns) == sum(len(r.turns) for r in store.sessions())
    assert set(tables.turns["run_id"]) == set(tables.sessions["run_id"])
    with pytest.raises(FileNotFoundError):
        rapport.load(tmp_path)
