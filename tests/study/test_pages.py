"""What the study's pages show a participant and a researcher (over HTTP, without script):
the participant number, a way back from a session that is not open yet, ending a session
only on purpose and after writing, the survey as the app asked it, transcripts."""

from __future__ import annotations

import re

import httpx

from rapport.study import StudyCreated, StudyDB, start_study_server
from rapport.study._db import SessionKey

from .helpers import Participant, scripted_roles


def _participant(url: str, study: StudyCreated, who: str = "p01") -> Participant:
    return Participant(httpx.Client(base_url=url, timeout=30), f"/p/{study.tokens[who]}")


def test_participants_see_their_number_on_every_page(study: StudyCreated) -> None:
    with start_study_server(study.study_dir, models=scripted_roles()) as url:
        p = _participant(url, study, "p02")
        assert "Participant number <strong>p02</strong>" in p.open().text
        p.consent()
        for page in (p.open(), p.page(1)):
            assert "Participant number <strong>p02</strong>" in page.text


def test_a_later_session_opened_early_has_a_way_back(study: StudyCreated) -> None:
    with start_study_server(study.study_dir, models=scripted_roles()) as url:
        p = _participant(url, study)
        p.consent()
        early = p.client.get(f"{p.path}/s/2")
        assert early.status_code == 409
        assert f'<a href="{p.path}">Back to your sessions</a>' in early.text
        assert "finish the sessions before this one first" in early.text
        gone = p.client.get(f"{p.path}/s/99")
        assert gone.status_code == 404 and "Back to your sessions" in gone.text
        stranger = p.client.get("/p/not-a-real-token/s/1")
        assert stranger.status_code == 404 and "Back to your sessions" not in stranger.text


def test_a_session_ends_only_after_writing_and_after_confirming(study: StudyCreated) -> None:
    with start_study_server(study.study_dir, models=scripted_roles()) as url:
        p = _participant(url, study)
        p.consent()
        session = p.page(1).text
        # the way to end is a link at the top, not a button under Send
        assert f'href="{p.path}/s/1/end"' in session
        assert f'action="{p.path}/s/1/end"' not in session
        assert session.index("End this session") < session.index('id="send"')
        confirm = p.client.get(f"{p.path}/s/1/end").text
        assert "You have not written to the assistant" in confirm and "end-button" not in confirm
        refused = p.end(1)
        assert refused.status_code == 409 and "Back to your sessions" in refused.text
        p.reply(1, p.send(1, "my loop returns nothing").json()["stored"])
        confirm = p.client.get(f"{p.path}/s/1/end").text
        assert 'id="end-button"' in confirm and "Back to the conversation" in confirm
        assert p.end(1).status_code == 303


def test_the_survey_asks_the_apps_questions_and_fixes_memory_in_a_first_session(
    study: StudyCreated,
) -> None:
    with start_study_server(study.study_dir, models=scripted_roles()) as url:
        p = _participant(url, study)
        p.consent()
        p.reply(1, p.send(1, "hello").json()["stored"])
        p.end(1)
        survey = p.client.get(f"{p.path}/s/1/survey").text
        legends = re.findall(r"<legend>(\d)\. ", survey)
        assert legends == ["1", "2", "3", "4", "5"]
        assert survey.count('name="adherence"') == 5 and survey.count('name="impact"') == 4
        assert '<input type="hidden" name="memory" value="1">' in survey
        assert 'id="feedback"' in survey and 'id="own_preferences"' in survey
        answers = {"adherence": "4", "memory": "5", "confidence": "3", "satisfaction": "5"}
        posted = p.client.post(
            f"{p.path}/s/1/survey",
            data={"csrf": p.csrf, **answers, "impact": "followed_helped",
                  "feedback": "it asked first", "own_preferences": "type hints, kept"},
        )  # fmt: skip
        assert posted.status_code == 303
        p.wait_saved(1)
        p.play(2, ["next"], rating=2)
        second = p.client.get(f"{p.path}/s/2/survey").text
        assert 'name="memory" value="5"' not in second  # answered already: no form
    db = StudyDB(study.study_dir)
    try:
        first = db.survey(SessionKey("p01", "none", 0))
        later = db.survey(SessionKey("p01", "none", 1))
    finally:
        db.close()
    assert first is not None and first.ratings["memory"] == 1
    assert first.ratings["satisfaction"] == 5 and first.impact == "followed_helped"
    assert first.own_preferences == "type hints, kept"
    assert later is not None and later.ratings["memory"] == 2


def test_a_survey_without_impact_is_refused(study: StudyCreated) -> None:
    with start_study_server(study.study_dir, models=scripted_roles()) as url:
        p = _participant(url, study)
        p.consent()
        p.reply(1, p.send(1, "hello").json()["stored"])
        p.end(1)
        ratings = {"adherence": "4", "memory": "1", "confidence": "3", "satisfaction": "5"}
        refused = p.client.post(f"{p.path}/s/1/survey", data={"csrf": p.csrf, **ratings})
        assert refused.status_code == 400 and "impact" in refused.text


def test_the_researcher_page_is_wide_and_links_each_transcript(study: StudyCreated) -> None:
    with start_study_server(study.study_dir, models=scripted_roles()) as url:
        p = _participant(url, study)
        p.consent()
        p.play(1, ["where is the bug?"], feedback="it was quick")
        p.wait_saved(1)
        r = f"/r/{study.researcher_token}"
        overview = p.client.get(f"{r}/").text
        assert '<body class="wide-page">' in overview
        assert f'<a href="{r}/p/p01">p01</a>' in overview
        transcript = p.client.get(f"{r}/p/p01").text
        assert "where is the bug?" in transcript and "it was quick" in transcript
        assert "Part 1, session 1: coding, none" in transcript
        assert "Not started." in transcript
        assert p.client.get(f"{r}/p/p99").status_code == 404
        assert p.client.get("/r/wrong/p/p01").status_code == 404
