"""Agent output as sanitized HTML: Markdown rendered by markdown-it-py (raw HTML off), then
cleaned by nh3 (the Rust ``ammonia`` sanitizer) with a short allow-list."""

from __future__ import annotations

from functools import cache
from typing import Any

TAGS = {
    "p", "br", "hr", "em", "strong", "code", "pre", "blockquote", "ul", "ol", "li",
    "h1", "h2", "h3", "h4", "h5", "h6", "a", "table", "thead", "tbody", "tr", "th", "td", "del",
}  # fmt: skip
ATTRIBUTES = {"a": {"href", "title"}, "code": {"class"}, "th": {"align"}, "td": {"align"}}
URL_SCHEMES = {"http", "https", "mailto"}


@cache
def _markdown() -> Any:
    try:
        from markdown_it import MarkdownIt
    except ImportError as exc:  # pragma: no cover - a core dependency of the study extra
        raise ImportError(
            "the study app needs markdown-it-py: pip install 'rapport-toolkit[study]'"
        ) from exc
    return MarkdownIt("commonmark", {"html": False, "linkify": False}).enable("table")


def render_markdown(text: str) -> str:
    """Safe HTML for a model's Markdown: no scripts, no event handlers, no ``javascript:``."""
    try:
        import nh3
    except ImportError as exc:  # pragma: no cover
        raise ImportError("the study app needs nh3: pip install 'rapport-toolkit[study]'") from exc
    html = _markdown().render(text)
    return nh3.clean(
        html,
        tags=TAGS,
        attributes=ATTRIBUTES,
        url_schemes=URL_SCHEMES,
        link_rel="noopener noreferrer nofollow",
    )
