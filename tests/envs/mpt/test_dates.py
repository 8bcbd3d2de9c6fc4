"""The paper-era date rule (``--dates dateparser``) beside exp7's, and the option's errors."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from pydantic import ValidationError

from rapport.cli import main
from rapport.envs.mpt import MPTEvalOutcome, MPTOptions, instance_scores, normalize

GOLD = {"name": "GetFlights", "arguments": {"departure_date": "2019-03-05", "depart_time": "18:15"}}


def _outcome(**predicted: str) -> MPTEvalOutcome:
    return MPTEvalOutcome(
        challenge="recall",
        query_type="single-turn",
        domain="GetFlights",
        gold=GOLD,
        pref_slots=["flight_class"],
        pref_map={"GetFlights": ["flight_class"]},
        predicted_name="GetFlights",
        predicted=predicted,
    )


def test_dateparser_reads_dates_that_exp7_leaves_as_written() -> None:
    pytest.importorskip("dateparser")
    for text in ("2019/03/05", "Tuesday, March 5", "5th of March 2019"):
        assert normalize("departure_date", text) == text  # exp7: no pattern reads it
        assert normalize("departure_date", text, dates="dateparser") == "03-05"
    assert normalize("departure_date", "2019-03-05", dates="dateparser") == "03-05"
    assert normalize("depart_time", "6:15 pm", dates="dateparser") == "18:15"
    # Text with no digit in a time slot, and slots that are neither, stay as written.
    assert normalize("depart_time", "evening", dates="dateparser") == "evening"
    assert normalize("city", "March 5", dates="dateparser") == "March 5"


def test_the_dates_option_scores_a_date_exp7_cannot_read() -> None:
    pytest.importorskip("dateparser")
    outcome = _outcome(departure_date="2019/03/05", depart_time="6:15 pm")
    exp7 = instance_scores(outcome, lambda slot, value: False, dates=MPTOptions().date_rule)
    paper = instance_scores(
        outcome, lambda slot, value: False, dates=MPTOptions(dates="dateparser").date_rule
    )
    assert (exp7["oa_tp"], exp7["oa_pred"], exp7["oa_gold"]) == (1.0, 2.0, 2.0)
    assert (paper["oa_tp"], paper["oa_pred"], paper["oa_gold"]) == (2.0, 2.0, 2.0)
    assert not {"dateparser", "month_names"} & (exp7.keys() | paper.keys())  # settings, not scores


def test_month_dates_and_dateparser_are_not_combined() -> None:
    with pytest.raises(ValidationError, match="month_dates"):
        MPTOptions(dates="dateparser", month_dates=True)


def test_without_the_package_the_option_is_refused_with_the_install_line(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(sys.modules, "dateparser", None)  # import dateparser now fails
    with pytest.raises(ValidationError, match="pip install"):
        MPTOptions(dates="dateparser")
    assert MPTOptions().date_rule == "exp7"


def test_the_cli_refuses_it_in_one_line_and_writes_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setitem(sys.modules, "dateparser", None)
    run_dir = tmp_path / "run"
    argv = ["run", "mpt", "--users", "1", "--dates", "dateparser", "--run-dir", str(run_dir)]
    code = main([*argv, "--model", "all=scripted/auto", "--no-progress"])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2
    assert len(err) == 1 and "dateparser" in err[0] and "pip install" in err[0]
    assert not run_dir.exists()
