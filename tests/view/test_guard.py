"""The viewer answers only requests addressed to its own loopback address (a DNS-rebinding
page names another host), and sends security headers."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from rapport.view import start_server

pytestmark = pytest.mark.attack


@pytest.mark.parametrize("host", ["evil.example", "evil.example:{port}", "127.0.0.1:1", "[::1]"])
def test_another_host_is_refused(scripted_run: Path, host: str) -> None:
    with start_server(scripted_run) as url:
        port = url.rsplit(":", 1)[1]
        page = httpx.get(f"{url}/", headers={"host": host.format(port=port)})
    assert page.status_code == 421
    assert "Every" not in page.text and page.headers["x-frame-options"] == "DENY"


def test_its_own_address_is_answered_with_security_headers(scripted_run: Path) -> None:
    with start_server(scripted_run) as url:
        port = url.rsplit(":", 1)[1]
        pages = [
            httpx.get(f"{url}/", headers={"host": host})
            for host in (f"127.0.0.1:{port}", f"localhost:{port}", "LOCALHOST")
        ]
    for page in pages:
        assert page.status_code == 200
        assert "default-src 'none'" in page.headers["content-security-policy"]
        assert page.headers["x-content-type-options"] == "nosniff"
        assert page.headers["referrer-policy"] == "no-referrer"
