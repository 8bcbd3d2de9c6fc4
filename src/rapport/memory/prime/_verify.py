"""Checks on a written lesson, by code: what a small distiller gets wrong, said in words that
can go back to it (refine) and into the library's history (audit); near-duplicate lessons."""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from difflib import SequenceMatcher

LESSON_CHARS = 200
"""The longest lesson the distiller may write (its schema's limit)."""
_STOP_WORDS = "a an the is are be it its s this that to of you your do does"
_STOP = frozenset(_STOP_WORDS.split())
_META = re.compile(
    r"\b(zones?|golden|reward|rewards|key turns?|credit|distil\w*|trajector\w*)\b|warning zone",
    re.IGNORECASE,
)
_ASK = re.compile(
    r"\bask(s|ed|ing)?\s+(whether|if|about|the|for|what|which|who|how|it|them)\b", re.I
)
_AGAIN = re.compile(r"\bagain\b", re.IGNORECASE)


def tokens(text: str) -> list[str]:
    """Lower-case runs of letters and digits."""
    return re.findall(r"[a-z0-9]+", text.lower())


def names_any(text: str, names: list[str]) -> bool:
    """Whether ``text`` contains one of ``names`` as whole words (case and punctuation aside;
    a plural ``s`` counts)."""
    padded = f" {' '.join(tokens(text))} "
    for name in names:
        form = " ".join(tokens(name))
        if form and (f" {form} " in padded or f" {form}s " in padded):
            return True
    return False


def quotes(text: str, sources: list[str], n: int = 6) -> bool:
    """Whether ``text`` repeats ``n`` or more words in a row from one of ``sources``: a small
    model's "lesson" that parrots the environment's reply (a format error message, a hint)
    instead of saying what to do."""
    own = tokens(text)
    runs = {tuple(own[i : i + n]) for i in range(len(own) - n + 1)}
    if not runs:
        return False
    for source in sources:
        words = tokens(source)
        if any(tuple(words[i : i + n]) in runs for i in range(len(words) - n + 1)):
            return True
    return False


def babbles(text: str) -> bool:
    """Whether ``text`` loops, as small models fall into: a run of one or two words said
    three times back to back, or of three to eight said twice back to back, or a run of
    eight tokens that comes twice anywhere. Numbers and one-letter words do not count
    towards the back-to-back runs (``f(1, 1, 1, 1)`` is not a loop), and a phrase that
    merely recurs ("ask whether it is ... before asking whether it is ...") is not one."""
    every = tokens(text)
    words = [w for w in every if len(w) > 1 and not w.isdigit()]
    for n in range(1, 9):
        times = 3 if n < 3 else 2
        for i in range(len(words) - n * times + 1):
            run = words[i : i + n]
            if all(words[i + k * n : i + (k + 1) * n] == run for k in range(1, times)):
                return True
    eights = Counter(tuple(every[i : i + 8]) for i in range(len(every) - 7))
    return any(n >= 2 for n in eights.values())


def english(text: str) -> bool:
    """Whether at least 90% of the letters are ASCII (the lessons are read in English)."""
    letters = [ch for ch in text if ch.isalpha()]
    return bool(letters) and sum(ch.isascii() for ch in letters) >= 0.9 * len(letters)


@dataclass(frozen=True)
class TurnFacts:
    """What code knows of the key turn a lesson is written for."""

    turn: int
    """1-based."""
    repeated: bool = False
    """The move repeated an earlier one (or answered again)."""
    talks: bool = True
    """Whether someone answers questions in words there (false: FunctionGym, SearchGym)."""
    moves: list[str] = field(default_factory=list)
    """An example of each move the environment takes."""
    secrets: list[str] = field(default_factory=list)
    replies: list[str] = field(default_factory=list)


def cut_off(text: str) -> bool:
    """Whether a lesson stops mid-sentence: on a comma, semicolon, colon or dash, or near
    the length limit without a sentence's end."""
    end = text.rstrip()[-1:]
    return end in {",", ";", ":", "-"} or (
        len(text) >= LESSON_CHARS - 15 and end not in {".", "!", "?", ")", '"', "'"}
    )


_SENTENCE_END = re.compile(r"[.!?](?=\s)")


def whole_sentences(text: str) -> str:
    """A lesson cut off mid-sentence (the length limit stops the model's string) without
    its unfinished last sentence, when what remains is a sentence of four words or more;
    any other text as it is."""
    if not cut_off(text):
        return text
    ends = [m.end() for m in _SENTENCE_END.finditer(text)]
    kept = text[: ends[-1]].strip() if ends else ""
    return kept if len(kept.split()) >= 4 else text


def lesson_problems(lesson: str, facts: TurnFacts) -> list[str]:
    """Why ``lesson`` cannot go into the library (empty: it can), each reason a clause that
    reads after "the lesson ..." and tells the distiller what to fix."""
    text = lesson.strip()
    if text and not english(text):
        return ["is not written in English"]
    if len(tokens(text)) < 4:
        return ["is too short to act on"]
    problems = []
    if cut_off(text):
        problems.append(f"is cut off mid-sentence (keep it under {LESSON_CHARS} characters)")
    if babbles(text):
        problems.append("repeats itself")
    if names_any(text, facts.secrets):
        problems.append("names this episode's answer, which no other episode shares")
    if quotes(text, facts.replies):
        problems.append("copies the environment's reply instead of saying what to do")
    if _META.search(text):
        problems.append("speaks of the scoring (zone, reward, key turn) instead of the task")
    if _AGAIN.search(text) and not facts.repeated:
        problems.append(f"says 'again', but the move at turn {facts.turn} was made only once")
    if not facts.talks and _ASK.search(text):
        moves = "; ".join(f"`{m}`" for m in facts.moves) or "the listed moves"
        problems.append(f"tells the agent to ask, but nobody answers questions here: {moves}")
    return problems


def content(text: str) -> list[str]:
    """The words two lessons are compared on: tokens less the commonest function words."""
    return [w for w in tokens(text) if w not in _STOP]


def same_lesson(a: str, b: str, threshold: float = 0.9) -> bool:
    """Whether two lessons say the same thing: their content words, in order, match at
    ``threshold`` or more (a swapped "ask X, not Y" / "ask Y, not X" pair does not)."""
    x, y = content(a), content(b)
    if not x or not y:
        return x == y
    return SequenceMatcher(None, x, y, autojunk=False).ratio() >= threshold
