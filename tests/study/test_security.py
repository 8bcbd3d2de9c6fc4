"""What must hold for real people: participants reach only their own sessions, researcher
pages need the researcher's token, forms need their CSRF token, bodies and messages are
bounded, and agent output is sanitized. Nothing refused is stored."""

from __future__ import annotations

import secrets
from html.parser import HTMLParser

import httpx
import pytest

from rapport.study import (
    MAX_BODY,
    SessionKey,
    StudyCreated,
    StudyDB,
    TurnOrderError,
    render_markdown,
    start_study_server,
)

from .helpers import Participant, scripted_roles

pytestmark = pytest.mark.attack


def _people(study: StudyCreated, client: httpx.Client) -> tuple[Participant, Participant]:
    a, b = (Participant(client, f"/p/{study.tokens[p]}") for p in ("p01", "p02"))
    a.consent()
    b.consent()
    return a, b


def _all_messages(study: StudyCreated) -> int:
    db = StudyDB(study.study_dir)
    try:
        return db.counts()["messages"]
    finally:
        db.close()


@pytest.mark.race
def test_participants_reach_only_their_own_sessions(study: StudyCreated) -> None:
    with start_study_server(study.study_dir, models=scripted_roles()) as url:
        client = httpx.Client(base_url=url, timeout=30)
        a, b = _people(study, client)
        sent = b.send(1, "b's private words")
        b.reply(1, sent.json()["stored"])
        for guess in (secrets.token_urlsafe(24), "p02", "", "../r", study.researcher_token):
            assert client.get(f"/p/{guess}/s/1").status_code in (404, 307, 308)
            assert client.post(f"/p/{guess}/s/1/message", data={"text": "x"}).status_code == 404
        for pos in range(1, 13):
            assert "b's private words" not in client.get(f"/p/{study.tokens['p01']}/s/{pos}").text
        assert client.get(f"/p/{study.tokens['p01']}/s/13").status_code == 404
        assert client.get(f"/p/{study.tokens['p01']}/s/0").status_code == 404
        # A later session is closed until the ones before it are done.
        assert a.send(2, "skipping ahead").status_code == 409
        assert client.get(f"/p/{study.tokens['p01']}/s/4/events").status_code == 409
    assert _all_messages(study) == 2


@pytest.mark.race
def test_researcher_pages_need_the_researchers_token(study: StudyCreated) -> None:
    with start_study_server(study.study_dir, models=scripted_roles()) as url:
        client = httpx.Client(base_url=url, timeout=30)
        for token in (study.tokens["p01"], secrets.token_urlsafe(24), "x"):
            for page in ("/", "/report.json", "/answers.json"):
                assert client.get(f"/r/{token}{page}").status_code == 404
        assert client.get(f"/r/{study.researcher_token}/").status_code == 200
        assert client.get(f"/r/{study.researcher_token}/answers.json").json()["messages"] == []


@pytest.mark.race
def test_forms_need_their_own_csrf_token(study: StudyCreated) -> None:
    with start_study_server(study.study_dir, models=scripted_roles()) as url:
        client = httpx.Client(base_url=url, timeout=30)
        a, b = _people(study, client)
        path = f"/p/{study.tokens['p01']}/s/1"
        for data in ({"text": "no token"}, {"text": "b's token", "csrf": b.csrf},
                     {"text": "bad", "csrf": "0" * 64}):  # fmt: skip
            assert client.post(f"{path}/message", data=data).status_code == 403
        assert client.post(f"{path}/end", data={}).status_code == 403
        fresh = Participant(client, f"/p/{study.tokens['p03']}")
        fresh.open()
        refused = client.post(f"/p/{study.tokens['p03']}/consent", data={"agree": "yes"})
        assert refused.status_code == 403
        assert "Before you start" in fresh.open().text  # still not consented
        as_json = client.post(f"{path}/message", json={"text": "json", "csrf": a.csrf})
        assert as_json.status_code == 415
    assert _all_messages(study) == 0


@pytest.mark.race
def test_bodies_and_messages_are_bounded(study: StudyCreated) -> None:
    with start_study_server(study.study_dir, models=scripted_roles()) as url:
        client = httpx.Client(base_url=url, timeout=30)
        a, _b = _people(study, client)
        path = f"/p/{study.tokens['p01']}/s/1/message"
        huge = client.post(path, data={"csrf": a.csrf, "text": "x" * (MAX_BODY + 10)})
        assert huge.status_code == 413

        def chunks():  # type: ignore[no-untyped-def]
            for _ in range(20):
                yield b"text=" + b"y" * 8192

        streamed = client.post(
            path,
            content=chunks(),
            headers={"content-type": "application/x-www-form-urlencoded"},
        )
        assert streamed.status_code == 413
        long = a.send(1, "z" * 4001)
        assert long.status_code == 400 and "4000" in long.json()["error"]
        assert a.send(1, "   ").status_code == 400
        page = client.get(f"/p/{study.tokens['p01']}")
        assert "default-src 'none'" in page.headers["content-security-policy"]
        assert page.headers["referrer-policy"] == "no-referrer"
    assert _all_messages(study) == 0


@pytest.mark.race
def test_a_participant_cannot_write_twice_before_the_reply(study: StudyCreated) -> None:
    db = StudyDB(study.study_dir)
    try:
        key = SessionKey("p01", "none", 0)
        db.add_message(key, "user", "first")
        with pytest.raises(TurnOrderError):
            db.add_message(key, "user", "second")
        db.add_message(key, "agent", "reply")
        db.end(key)
        with pytest.raises(TurnOrderError, match="over"):
            db.add_message(key, "user", "after the end")
        assert [m.text for m in db.messages(key)] == ["first", "reply"]
    finally:
        db.close()


PAYLOADS = [
    "<script>window.__xss = 1</script>",
    '<img src=x onerror="window.__xss = 2">',
    "[click me](javascript:window.__xss=3)",
    '<a href="javascript:window.__xss=4">link</a>',
    "<svg onload=window.__xss=5></svg>",
    '<iframe src="javascript:window.__xss=6"></iframe>',
    "[data](data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==)",
]


class _Tags(HTMLParser):
    """Every element and attribute of an HTML fragment, as a browser would parse it."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str]]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, {k: v or "" for k, v in attrs}))


def dangerous(html: str) -> list[str]:
    """What in an HTML fragment could run script: script-bearing elements, event handler
    attributes, and javascript:/data: URLs."""
    parser = _Tags()
    parser.feed(html)
    found = []
    for tag, attrs in parser.tags:
        if tag in ("script", "iframe", "svg", "object", "embed", "img", "style"):
            found.append(tag)
        found += [name for name in attrs if name.startswith("on")]
        found += [
            f"{name}={value}"
            for name, value in attrs.items()
            if value.strip().lower().startswith(("javascript:", "data:", "vbscript:"))
        ]
    return found


@pytest.mark.parametrize("payload", PAYLOADS)
def test_agent_markdown_is_sanitized(payload: str) -> None:
    html = render_markdown(f"Here you go:\n\n{payload}\n\n**bold** and `code`")
    assert dangerous(html) == []
    assert "<strong>bold</strong>" in html and "<code>code</code>" in html


def test_the_check_finds_what_it_looks_for() -> None:
    assert dangerous('<p onclick="x()"><a href=" JavaScript:y">a</a><script></script></p>') == [
        "onclick",
        "href= JavaScript:y",
        "script",
    ]


def test_safe_markdown_survives_sanitizing() -> None:
    html = render_markdown("1. one\n2. two\n\n```python\nx = 1\n```\n\n[docs](https://example.org)")
    assert "<ol>" in html and '<code class="language-python">' in html
    assert 'href="https://example.org"' in html and "noopener" in html
