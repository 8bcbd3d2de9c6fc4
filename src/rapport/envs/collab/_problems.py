"""How answers to the collab benchmark's problems are graded (`is_correct`)."""

from __future__ import annotations

import random
import re
import threading
from fractions import Fraction

from ._checkers import gives_answer
from ._types import Problem, letter


class ProblemSourceError(ValueError):
    """An unknown problem source, or a path that cannot be read as problems."""


def sample(problems: list[Problem], n: int, seed: int, source: str) -> list[Problem]:
    """A seeded sample of `n` problems, in sampled order."""
    if n > len(problems):
        raise ProblemSourceError(f"source '{source}' holds {len(problems)} problems, {n} asked")
    return random.Random(seed).sample(problems, n)


def is_correct(problem: Problem, answer_text: str) -> bool:
    """Whether free text gives the problem's gold answer.

    Math answers are compared symbolically with ``math-verify``, a short one-line text as a
    whole, else after extracting the final answer (``\\boxed{}``, "the answer is ...", else
    the last number); multiple-choice answers
    by their letter ("B", "(B)", "Answer: B", "b) ...").
    """
    if problem.kind == "choice":
        chosen = extract_choice(answer_text, problem.choices)
        return chosen is not None and chosen == problem.answer.strip().upper()
    bare = answer_text.strip().strip("$").strip()
    if bare and len(bare) <= _BARE and "\n" not in bare and math_equal(problem.answer, bare):
        return True  # a bare answer such as a draft: ``\frac{3}{4}``, ``x = -11``
    candidate = extract_final_answer(answer_text)
    return candidate is not None and math_equal(problem.answer, candidate)


_BARE = 60
"""Texts up to this long on one line are also compared whole."""


def stated_answer(problem: Problem, text: str, *, loose: bool = False) -> str | None:
    """The final answer an agent message states, or None when it states none yet.

    A message states an answer when it boxes one, says "the answer is ...", or concludes
    ("so ...", "therefore ..."): the answer is then read from the line of the last
    conclusion; numbers of a message that does not conclude are not answers.
    Multiple-choice answers come back as the option letter. `loose` also reads the last
    number of a math message with a computation in it (for a user who then judges it).
    """
    if not gives_answer(text) and not _CONCLUDES.search(text):
        if loose and problem.kind == "math" and "=" in text:
            return assigned_value(text) or extract_final_answer(text)
        return None
    if problem.kind == "choice":
        return extract_choice(_conclusion(text), problem.choices) or extract_choice(
            text, problem.choices
        )
    boxed = boxed_contents(text)
    if boxed:
        return boxed[-1]
    conclusion = _conclusion(text)
    return assigned_value(conclusion) or extract_final_answer(conclusion)


def _conclusion(text: str) -> str:
    """The line of the last conclusion mark ("answer is", "therefore", "so ..."), from it;
    with the next non-empty line too when that line hands over to it ("... is:")."""
    marks = list(_CONCLUDES.finditer(text))
    if not marks:
        return text
    line, _, after = text[marks[-1].start() :].partition("\n")
    if _HANDS_OVER.search(line):
        following = next((x for x in after.split("\n") if x.strip()), "")
        line = f"{line}\n{following}"
    return line


_HANDS_OVER = re.compile(r"(?:\bis|\bare|\bget|:|=)\s*(?:\$+|\\[\[(])?\s*$")
_ASSIGNED = re.compile(
    r"(?<![\w\\])[a-zA-Z]\s*=\s*([^=\n]+?)\s*(?:\\\]|\\\)|\$|[,;](?:\s|$)|\.(?:\s|$)|\n|$)"
)


def assigned_value(text: str) -> str | None:
    """The value of the last lone-variable assignment in a text (``x = -11`` -> ``-11``,
    ``\\( y = \\frac{3}{4} \\)`` -> ``\\frac{3}{4}``), or None when none gives a value
    with a digit in it."""
    for value in reversed(_ASSIGNED.findall(text)):
        value = value.strip().strip("*").strip()
        if any(c.isdigit() for c in value):
            return value
    return None


_CONCLUDES = re.compile(
    r"\\boxed|\b(?:final answer|the answer|answer\s*:|therefore|thus|hence|so\b)", re.I
)


def boxed_contents(text: str) -> list[str]:
    """The contents of every ``\\boxed{...}`` in a text, in order (nested braces kept)."""
    found: list[str] = []
    for match in re.finditer(r"\\(?:boxed|fbox)\s*\{", text):
        depth, i = 1, match.end()
        while i < len(text) and depth:
            depth += {"{": 1, "}": -1}.get(text[i], 0)
            i += 1
        if depth == 0:
            found.append(text[match.end() : i - 1].strip())
    return found


_ANSWER_IS = re.compile(
    r"(?:final answer|the answer|answer)\s*(?:is|=|:)\s*[:\-]?\s*(.+?)(?:\.(?:\s|$)|\n|$)",
    re.IGNORECASE,
)
_NUMBER = re.compile(r"-?\d+(?:,\d{3})*(?:\.\d+)?(?:\s*/\s*\d+)?")


def extract_final_answer(text: str) -> str | None:
    """The final answer in free text: last ``\\boxed{}``, "answer is X", else the last number."""
    boxed = boxed_contents(text)
    if boxed:
        return boxed[-1]
    stated = _ANSWER_IS.findall(text)
    if stated:
        return stated[-1].strip().strip("$*").strip()
    numbers = _NUMBER.findall(text)
    return numbers[-1].replace(",", "").replace(" ", "") if numbers else None


def _normalize(expr: str) -> str:
    expr = re.sub(r"\\(?:left|right|!|,|;|\s)|\$|\s", "", expr)
    return expr.rstrip(".").lower()


def _as_number(expr: str) -> Fraction | None:
    try:
        return Fraction(_normalize(expr).replace(",", ""))
    except (ValueError, ZeroDivisionError):
        return None


def math_equal(gold: str, candidate: str) -> bool:
    """Symbolic equality with ``math-verify``; exact string or number match first.

    math-verify guards its work with ``SIGALRM``, which only the main thread may use; off the
    main thread only the string and number comparisons run.
    """
    if _normalize(gold) == _normalize(candidate):
        return True
    number_gold, number_candidate = _as_number(gold), _as_number(candidate)
    if number_gold is not None and number_candidate is not None:
        return number_gold == number_candidate
    if threading.current_thread() is not threading.main_thread():
        return False
    from math_verify import parse, verify

    try:
        gold_parsed, pred_parsed = parse(f"${gold}$"), parse(f"${candidate}$")
        return bool(gold_parsed and pred_parsed and verify(gold_parsed, pred_parsed))
    except Exception:  # math-verify raises assorted sympy errors on odd input: not equal
        return False


def _valid(found: str, choices: list[str]) -> str | None:
    index = ord(found.upper()) - ord("A")
    limit = len(choices) if choices else 26
    return found.upper() if 0 <= index < limit else None


_CHOICE_PATTERNS = (
    re.compile(r"\\boxed\{\s*\(?([A-Za-z])\)?\s*\}"),
    re.compile(r"(?i:answer|option|choice)(?i:\s+is)?\s*[:\-]?\s*[(\[*]*\s*([A-Z])\b"),
    re.compile(r"(?i:answer|option|choice)(?i:\s+is)?\s*[:\-]?\s*[(\[*]*([a-z])(?:[)\].*]|$)"),
    re.compile(r"^\W{0,3}([A-Za-z])(?:[).:\]*]|\s*$)"),
    re.compile(r"\(([A-Z])\)"),
)


def extract_choice(text: str, choices: list[str] | None = None) -> str | None:
    """The option letter a free-text answer picks, or None.

    Tries, in order: a boxed letter, "answer/option is X", a leading "X)"/"(X)"/"X.", a
    parenthesised capital anywhere (last one), then the unique option text quoted verbatim.
    """
    choices = choices or []
    body = text.strip()
    for pattern in _CHOICE_PATTERNS:
        matches = pattern.findall(body)
        for found in reversed(matches):
            valid = _valid(found, choices)
            if valid is not None:
                return valid
    quoted = [
        i for i, c in enumerate(choices) if len(c.strip()) > 1 and c.strip().lower() in body.lower()
    ]
    return letter(quoted[0]) if len(quoted) == 1 else None
