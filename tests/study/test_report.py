"""A study's report: its per-session charts keep study types apart, and its description of
the run says what served it and who took part."""

from __future__ import annotations

import httpx

from rapport.report import build_report, curve_chart, render_html
from rapport.study import StudyCreated, StudyRuntime, record_serving, start_study_server

from .helpers import Participant, scripted_roles


def _play_first_sessions(study: StudyCreated, who: list[str]) -> None:
    with start_study_server(study.study_dir, models=scripted_roles()) as url:
        for participant in who:
            p = Participant(
                httpx.Client(base_url=url, timeout=30), f"/p/{study.tokens[participant]}"
            )
            p.consent()
            p.play(1, ["where do I start?"], rating=3)
            p.wait_saved(1)


def test_per_session_charts_keep_study_types_apart(study: StudyCreated) -> None:
    # p01 meets coding first (its sessions 0-2), p02 mixed first (stored as 3-5)
    _play_first_sessions(study, ["p01", "p02"])
    report = build_report(study.study_dir)
    assert list(report.curves) == ["none · coding", "none · mixed"]
    for name in report.curves:
        assert [p.index for p in report.curves[name]["adherence"]] == [0]
    assert report.series_origins == {"none · coding": ("none", 0), "none · mixed": ("none", 3)}
    links: list[tuple[str, int]] = []
    chart = curve_chart(report, "adherence", lambda c, i: links.append((c, i)) or f"/{c}/{i}")
    assert chart is not None and [s.name for s in chart.series] == list(report.curves)
    assert sorted(links) == [("none", 0), ("none", 3)]
    assert "series_origins" not in report.to_json()
    light = build_report(study.study_dir, light=True)
    assert list(light.curves) == ["none · coding", "none · mixed"]


def test_the_run_section_says_what_served_it_and_who_consented(study: StudyCreated) -> None:
    runtime = StudyRuntime(study.study_dir, models=scripted_roles())
    try:
        record_serving(runtime)
    finally:
        runtime.close()
    _play_first_sessions(study, ["p01", "p02"])  # 2 of the 4 invited consent
    report = build_report(study.study_dir)
    assert report.users == 2
    described = report.description
    assert described is not None and described.invocations == 1
    assert described.python and described.platform
    assert {"nh3", "starlette", "pydantic"} <= set(described.packages)
    assert report.planned_sessions == 4 * 12
    html = render_html(report)
    assert "<th>python, platform</th><td>-, -</td>" not in html
    assert "<th>invocations</th><td>1</td>" in html
    assert "nh3 " in html.split("<h3>Packages</h3>", 1)[1]
