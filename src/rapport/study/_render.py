"""Agent output as sanitized HTML: Markdown rendered by markdown-it-py (raw HTML off), then
cleaned by nh3 (the Rust ``ammonia`` sanitizer) with a short allow-list."""

from __future__ import annotations

from functools import cache, lru_cache
from typing import Any

TAGS = {
    "p", "br", "hr", "em", "strong", "code", "pre", "blockquote", "ul", "ol", "li",
    "h1", "h2", "h3", "h4", "h5", "h6", "a", "table", "thead", "tbody", "tr", "th", "td", "del",
}  # fmt: skip
ATTRIBUTES = {"a": {"href", "title"}, "code": {"class"}, "th": {"align"}, "td": {"align"}}
URL_SCHEMES = {"http", "https", "mailto"}


EXTRA = {"markdown_it": "markdown-it-py", "nh3": "nh3"}
"""The ``study`` extra: module -> its package."""


def missing_extra() -> str:
    """The first package of the ``study`` extra that cannot be imported ("" when all can);
    ``rapport study serve`` refuses to start without them."""
    import importlib.util

    for module, package in EXTRA.items():
        try:
            found = importlib.util.find_spec(module) is not None
        except (ImportError, ValueError):
            found = False
        if not found:
            return package
    return ""


@cache
def _markdown() -> Any:
    try:
        from markdown_it import MarkdownIt
    except ImportError as exc:  # pragma: no cover - a core dependency of the study extra
        raise ImportError(
            "the study app needs markdown-it-py: pip install 'rapport-toolkit[study]'"
        ) from exc
    return MarkdownIt("commonmark", {"html": False, "linkify": False}).enable("table")


@lru_cache(maxsize=8192)
def render_markdown(text: str) -> str:
    """Safe HTML for a model's Markdown: no scripts, no event handlers, no ``javascript:``
    (kept for the replies rendered last: a page is read again and again)."""
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
