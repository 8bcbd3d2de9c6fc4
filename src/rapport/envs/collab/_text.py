"""Text structure helpers for the checkers: blocks, list lines, headings, sentences."""

from __future__ import annotations

import re

BULLET_LINE = re.compile(r"^\s{0,8}[-*+•]\s+\S")
NUMBERED_LINE = re.compile(r"^\s{0,8}(?:step\s+)?(\d{1,3})[.):]\s+\S", re.IGNORECASE)
MARKDOWN_HEADING = re.compile(r"^\s{0,3}#{1,6}\s+\S")
BOLD_HEADING = re.compile(r"^\s{0,3}(?:\*\*|__)[^*_\n]{1,80}(?:\*\*|__)\s*:?\s*$")
_CODE_FENCE = re.compile(r"```.*?(?:```|\Z)", re.DOTALL)
_DISPLAY_MATH = re.compile(r"\$\$.*?\$\$|\\\[.*?\\\]", re.DOTALL)
_INLINE_MATH = re.compile(r"\$[^$\n]+\$|\\\(.*?\\\)")
_ABBREVIATIONS = (
    "e.g.",
    "i.e.",
    "etc.",
    "vs.",
    "cf.",
    "approx.",
    "Mr.",
    "Mrs.",
    "Ms.",
    "Dr.",
    "Prof.",
    "Jr.",
    "Sr.",
    "Fig.",
    "Eq.",
    "eq.",
    "fig.",
    "a.m.",
    "p.m.",
    "U.S.",
)
_ABBREV_RE = re.compile(
    r"(?<![\w.])(?:" + "|".join(re.escape(a) for a in _ABBREVIATIONS) + r")", re.IGNORECASE
)
_NUMBERED_ABBREV = re.compile(r"\b(?:no|p|pp|nr)\.(?=\s?\d)", re.IGNORECASE)
_SENTENCE_END = re.compile(r"(?:[.!?]+|…)[\"')\]]*(?=\s|$)")
_PLACEHOLDER = "MATHX"


def strip_code_and_math(text: str) -> str:
    """Replace code blocks and math by a neutral word, so their dots and symbols do not count."""
    text = _CODE_FENCE.sub(f" {_PLACEHOLDER} ", text)
    text = _DISPLAY_MATH.sub(f" {_PLACEHOLDER} ", text)
    return _INLINE_MATH.sub(_PLACEHOLDER, text)


def lines(text: str) -> list[str]:
    """The non-blank lines of a text, stripped on the right."""
    return [line.rstrip() for line in text.splitlines() if line.strip()]


def is_list_line(line: str) -> bool:
    """A bullet or numbered list item."""
    return bool(BULLET_LINE.match(line) or NUMBERED_LINE.match(line))


def is_heading_line(line: str) -> bool:
    """A markdown heading or a bold title alone on its line."""
    return bool(MARKDOWN_HEADING.match(line) or BOLD_HEADING.match(line))


def paragraphs(text: str) -> list[str]:
    """Blank-line separated blocks, stripped, non-empty."""
    return [p.strip() for p in re.split(r"\n\s*\n", text) if p.strip()]


def _units(text: str) -> list[str]:
    """Prose runs and single list items: the spans sentences are counted in."""
    units: list[str] = []
    prose: list[str] = []
    for raw in text.splitlines():
        line = raw.strip()
        if not line or is_heading_line(raw) or is_list_line(raw):
            if prose:
                units.append(" ".join(prose))
                prose = []
            if line and is_list_line(raw):
                units.append(
                    re.sub(r"^(?:[-*+•]|(?:step\s+)?\d{1,3}[.):])\s+", "", line, flags=re.I)
                )
            continue
        prose.append(line)
    if prose:
        units.append(" ".join(prose))
    return units


def _mask_dots(unit: str) -> str:
    unit = re.sub(r"(?<=\d)\.(?=\d)", "_", unit)  # decimals: 3.14
    unit = _ABBREV_RE.sub(lambda m: m.group(0).replace(".", "_"), unit)
    unit = _NUMBERED_ABBREV.sub(lambda m: m.group(0).replace(".", "_"), unit)  # No. 5, p. 12
    # a.b; matches start at a word's start only, else a long word without a dot costs
    # quadratic time (every start position rescans the rest of the word)
    return re.sub(r"(?<!\w)\w+\.\w+(?:\.\w+)*", lambda m: m.group(0).replace(".", "_"), unit)


def split_sentences(text: str) -> list[str]:
    """Split a reply into sentences; each list item counts as at least one.

    Robust to decimals, common abbreviations, inline and display math, code blocks,
    file names and ellipses. Headings and fragments without letters or digits are not counted.
    """
    sentences: list[str] = []
    for unit in _units(strip_code_and_math(text)):
        masked = _mask_dots(unit)
        start = 0
        for match in _SENTENCE_END.finditer(masked):
            sentences.append(unit[start : match.end()].strip())
            start = match.end()
        sentences.append(unit[start:].strip())
    return [s for s in sentences if re.search(r"[A-Za-z0-9]", s)]


def count_sentences(text: str) -> int:
    """The number of sentences in a reply (see `split_sentences`)."""
    return len(split_sentences(text))
