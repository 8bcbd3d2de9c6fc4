"""The paper's tables across agent models: each figure the paper's way, and the report end
to end through ``rapport compare --paper-tables`` on scripted runs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rapport.envs.prefix import PrefixOutcome
from rapport.envs.prefix._across import across_models
from rapport.log import JudgeEvent, SessionRecord

UX = ["initiative_timing", "overall_user_experience"]


def _record(condition: str, sample: int, ux: float, alignment: float) -> SessionRecord:
    scores = {"accuracy": 1.0, "alignment": alignment, **{f"ux.{d}": ux for d in UX}}
    events = [
        JudgeEvent(judge=j, dimension=d, score=ux + (j == "judge2"), repeat=0)
        for j in ("judge", "judge2")
        for d in UX
    ]
    events += [
        JudgeEvent(judge=j, dimension="interaction_preference_alignment", score=alignment)
        for j in ("judge", "judge2")
    ]
    return SessionRecord(
        run_id="r",
        condition=f"{condition}+none",
        user_id="prefix-tool_high",
        index=sample,
        spec_id=f"t{sample}",
        scores=scores,
        events=events,
        outcome=PrefixOutcome(task_id=f"t{sample}", settings=["tool_high"]),
    )


def _run(no_p: tuple[float, float], p: tuple[float, float]) -> list[SessionRecord]:
    """Two samples per condition: (ux, alignment) as given, the same for both."""
    return [_record(c, i, *v) for c, v in (("no_p", no_p), ("p", p)) for i in range(2)]


def test_ux_gain_is_the_mean_of_the_models_gains_and_alignment_the_gain_of_means() -> None:
    runs = {"a": _run((2.0, 2.0), (3.0, 4.0)), "b": _run((4.0, 4.0), (4.0, 4.5))}
    ux, alignment, agreement, spread = across_models(runs)
    rows = {r[0]: r for r in ux.rows}
    assert ux.columns == ["dimension", "a no_p", "a p", "b no_p", "b p"]
    assert rows["Avg"][1:] == [2.0, 3.0, 4.0, 4.0]
    assert rows["Gain %"][1:] == [50.0, None, 0.0, None]
    assert rows["UX gain %: mean of the models' gains (the paper's)"][1] == 25.0
    assert rows["UX gain %: gain of the models' means"][1] == pytest.approx(16.667, abs=1e-3)
    by_model = {r[0]: r for r in alignment.rows}
    assert by_model["a"][1:] == [2.0, 4.0, 100.0] and by_model["b"][1:] == [4.0, 4.5, 12.5]
    # the paper's Avg: (4.25 - 3) / 3 = 41.7%, not the mean of the gains (56.25%)
    assert by_model["Avg (gain of the means: the paper's)"][1:] == [3.0, 4.25, 41.667]
    assert by_model["mean of the models' gains"][3] == 56.25
    icc = {r[0]: r for r in agreement.rows}
    assert icc["initiative_timing"][1] == 8  # every sample of both models is a target
    assert not spread.rows  # no judge ran a sample twice


def test_the_cli_lays_the_tables_out_over_scripted_runs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pytest.importorskip("bfcl_eval")
    from rapport.cli import main

    for name in ("one", "two"):
        argv = ["run", "prefix", "--settings", "tool_high", "--tasks", "1"]
        argv += ["--reliability", "repeats", "--model", "all=scripted/auto"]
        argv += ["--model", "judge2=scripted/auto", "--run-dir", str(tmp_path / name)]
        assert main(argv) == 0
    capsys.readouterr()
    argv = ["compare", str(tmp_path / "one"), str(tmp_path / "two"), "--paper-tables"]
    assert main([*argv, "--format", "json"]) == 0
    tables = json.loads(capsys.readouterr().out)["paper_tables"]
    assert [t["title"][:13] for t in tables] == ["PrefIx Table "] * 4
    assert tables[0]["columns"][1:3] == ["scripted/auto no_p", "scripted/auto p"]
    assert main(argv) == 0
    assert "PrefIx Table 3: preference alignment per agent model" in capsys.readouterr().out
