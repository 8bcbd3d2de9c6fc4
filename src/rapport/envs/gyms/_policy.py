"""A tau2 domain policy condensed for a small model: the rule lines that matter most."""

from __future__ import annotations

import re

_HEADING = re.compile(r"^(#+)\s*(.+?)\s*$")
_RULE = re.compile(
    r"\b(must|should|only|not|cannot|never|at most|at least|confirm|deny|transfer|need)\b",
    re.IGNORECASE,
)
_WORD = re.compile(r"[a-z]+")


def _sections(policy: str) -> list[tuple[str, list[str]]]:
    """(heading, body lines) in order; the text before the first ``##`` is the preamble."""
    sections: list[tuple[str, list[str]]] = [("General", [])]
    for line in policy.splitlines():
        heading = _HEADING.match(line)
        if heading and len(heading.group(1)) <= 2:
            sections.append((heading.group(2), []))
        elif line.strip() and not heading:
            sections[-1][1].append(line.strip())
    return [(title, body) for title, body in sections if body]


def _overlap(text: str, focus: set[str]) -> int:
    return len(set(_WORD.findall(text.lower())) & focus)


def condense_policy(policy: str, chars: int, focus: str = "") -> str:
    """At most ``chars`` characters of a Markdown policy: its section headings, then rule lines.

    Rule lines (must / should / only / never ...) are taken from the general preamble
    first, then from the sections whose heading shares most words with ``focus`` (the
    customer's request), each under its heading. ``chars`` <= 0 gives an empty string;
    a budget that holds the whole policy gives it unchanged.
    """
    if chars <= 0:
        return ""
    if len(policy) <= chars:
        return policy.strip()
    sections = _sections(policy)
    words = {w.rstrip("s") for w in _WORD.findall(focus.lower()) if len(w) > 3}
    stems = words | {w + "s" for w in words}
    general, rest = sections[:1], sections[1:]
    rest.sort(key=lambda s: -_overlap(s[0] + " " + " ".join(s[1][:3]), stems))
    out = "Sections: " + "; ".join(title for title, _ in sections) + "."
    for title, body in general + rest:
        rules = [line for line in body if _RULE.search(line)]
        block = "\n".join([f"{title}:", *(f"- {r.lstrip('-* ').strip()}" for r in rules)])
        if not rules:
            continue
        room = chars - len(out) - 1
        if room <= len(title) + 10:
            break
        out += "\n" + (block if len(block) <= room else block[: room - 3].rstrip() + "...")
    return out[:chars]
