"""Deterministic preference checkers: small pure functions of an agent message.

Each checker answers "does this reply honour the preference?" where code can decide. Callers
should skip format checks on replies that only ask a clarifying question
(`is_clarifying_question`): a user does not expect a TL;DR under "Which unit do you mean?".
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable

from ._taxonomy import load_taxonomy
from ._text import (
    NUMBERED_LINE,
    count_sentences,
    is_heading_line,
    is_list_line,
    lines,
    split_sentences,
    strip_code_and_math,
)

Checker = Callable[[str], bool]

_PREAMBLE = re.compile(
    r"^\W*(?:"
    r"(?:(?:that's|that is|this is|what)\s+)?(?:an?\s+)?(?:great|good|excellent|interesting"
    r"|nice|fun|fascinating|wonderful|lovely)\b[^.!?\n]{0,40}\b(?:question|problem|puzzle)"
    r"|what a\b"
    r"|let me (?:walk|take|guide|show) you\b|i(?:'ll| will) (?:explain|walk|show|guide|go through"
    r"|break)\b|(?:sure thing|no problem)\b"
    r"|(?:sure|certainly|of course|absolutely|okay|ok|alright|happy to help|glad to help)\b"
    r"|(?:i(?:'d| would)? (?:be )?(?:happy|glad|delighted) to)"
    r"|(?:let(?:'s| us| me) (?:take a look|dive|break (?:this|it) down|walk through|explore"
    r"|think about this|start by understanding|go through this|solve (?:this|it|the)"
    r"|work (?:through|on) (?:this|it|the)|tackle|help))"
    r"|(?:to (?:solve|answer|tackle|find)\b[^.\n]{0,80}?,\s*(?:we|i|you)(?:'ll| will| need| can"
    r"| should| must| have to)\b)|(?:here(?:'s| is) how\b)"
    r"|(?:thanks? (?:you )?for)|(?:you(?:'re| are) asking)|(?:so,? you want)"
    r"|(?:in this (?:answer|reply|response))|(?:here(?:'s| is) (?:an?|my) (?:explanation|answer"
    r"|overview|breakdown))|(?:to answer (?:your|this) question)"
    r")",
    re.IGNORECASE,
)
_PLEASANTRY = re.compile(
    r"\b(?:thanks?\b|thank you|you're welcome|my pleasure|happy to help|glad to help"
    r"|glad i could help|hope (?:this|that|it) helps|great question|good question"
    r"|excellent question|nice work|well done|great job|good job|good luck|best of luck"
    r"|have a (?:great|nice|good|lovely|wonderful)|i appreciate|appreciate (?:your|you)"
    r"|feel free to|don't hesitate|cheers|kind regards|you're doing great|pleasure"
    r"|delighted|(?:i'm|i am) (?:so |very |really )?sorry|apolog(?:y|ies|i[sz]e)"
    r"|wonderful question|glad (?:you|to))",
    re.IGNORECASE,
)
_SUGGESTION = re.compile(
    r"\b(?:next,? you (?:could|can|might|should)|as a next step|a good next step"
    r"|next step (?:is|would be|could be)|you (?:could|might|may) (?:also |now )?(?:try|want"
    r"|consider|explore|practi[cs]e|look into|check out)|i (?:would )?(?:suggest|recommend)"
    r"|(?:i'd|i would) (?:suggest|recommend)|consider (?:trying|practi[cs]ing|exploring|looking)"
    r"|try (?:solving|practi[cs]ing|a similar|another|working)|to go further"
    r"|to take (?:this|it) further|if you want to (?:go|dig|explore|practi[cs]e)"
    r"|a natural (?:next|follow-up)|(?:it|this) (?:would|might) be (?:worth|useful|helpful) to"
    r"|(?:here are|some) (?:some )?(?:possible |suggested )?next steps)",
    re.IGNORECASE,
)
_CHECK_IN = re.compile(
    r"(?:make sense|clear so far|follow(?:ing)?|ready|shall we|should we|want (?:me )?to"
    r"|go on|continue|move on|next step|with me|questions?|okay|ok|good to go|understand"
    r"|try (?:the next|it)|does that|is that)[^?]{0,80}\?\W*$",
    re.IGNORECASE,
)
_TAKEAWAYS = re.compile(
    r"(?im)^\W{0,6}(?:key (?:takeaways?|points|ideas|lessons)|takeaways?|main points"
    r"|in summary|to summari[sz]e|summary|to recap|recap|what to remember)\b"
    r"|\blet(?:'s| us| me) (?:summari[sz]e|recap|sum up)\b"
)
_OUTLINE_LABEL = re.compile(
    r"^\W{0,6}(?:outline|plan|roadmap|overview|here(?:'s| is) what (?:we|i)(?:'ll| will)\b"
    r"|(?:we|i)(?:'ll| will) cover\b|here(?:'s| is) (?:the|my|our) (?:plan|outline"
    r"|approach|roadmap)|we(?:'ll| will) (?:proceed|go) in|i(?:'ll| will) (?:cover|go through"
    r"|proceed|walk through|first)|first,? (?:we|i)(?:'ll| will)?[^.\n]{0,80}\bthen\b)",
    re.IGNORECASE,
)
_EXAMPLE = re.compile(
    r"\b(?:for example|for instance|e\.g\.|example:|as an example|an example|worked example"
    r"|example \d|imagine|picture (?:this|a|an|the)|think of (?:it|this|that|a|an|the)|it's like"
    r"|it is like|is like (?:a|an|the)|just like|similar to how|analogy|analogous"
    r"|suppose (?:you|we|that)|say you|let's say)",
    re.IGNORECASE,
)
_TLDR = re.compile(r"^\W{0,4}(?:tl;?\s?dr|tl,dr)\b[^\w\n]*\w", re.IGNORECASE)
_PERCENT = r"\d{1,3}(?:\.\d+)?\s?%"
_CONFIDENCE = re.compile(
    r"(?:confiden(?:ce|t)|certainty|certain|sure|likelihood|probability)[^.\n]{0,40}?"
    rf"(?:{_PERCENT}|\b(?:high|medium|moderate|low|very high|very low)\b|\d(?:\.\d)?\s?/\s?10)"
    rf"|{_PERCENT}[^.\n]{{0,25}}(?:confiden|certain|sure)"
    r"|\b(?:i'm|i am)\s+(?:very |fairly |quite |reasonably |highly |moderately |not )?"
    r"(?:confident|sure|certain)\b",
    re.IGNORECASE,
)


def no_preamble(text: str) -> bool:
    """The reply opens with substance, not a restatement, announcement or warm-up."""
    body = strip_code_and_math(text).strip()
    return bool(body) and not _PREAMBLE.match(body)


def has_pleasantry(text: str) -> bool:
    """The reply contains at least one courteous phrase."""
    return bool(_PLEASANTRY.search(strip_code_and_math(text)))


def no_pleasantry(text: str) -> bool:
    """The reply contains no pleasantry at all."""
    return not has_pleasantry(text)


_SIGN_OFF = re.compile(r"^\W{0,4}(?:tl;?\s?dr|tl,dr|confidence)\b", re.IGNORECASE)


def _final_part(text: str) -> str:
    """The reply's last two sentences, before any trailing TL;DR or confidence line."""
    body = lines(strip_code_and_math(text))
    while body and _SIGN_OFF.match(body[-1]):
        body.pop()
    return " ".join(split_sentences("\n".join(body))[-2:])


def ends_with_next_step(text: str) -> bool:
    """The last part of the reply proposes a concrete next step."""
    return bool(_SUGGESTION.search(_final_part(text)))


def no_suggestion(text: str) -> bool:
    """No unsolicited suggestion or recommendation anywhere in the reply."""
    return not _SUGGESTION.search(strip_code_and_math(text))


_MAX_INCREMENT_ITEMS = 3
"""More list items than this is the whole procedure at once, not one increment."""


def ends_with_check_in(text: str) -> bool:
    """The reply covers one increment (at most three list items) and ends by checking that
    the user follows before going on."""
    body = strip_code_and_math(text).strip()
    items = sum(is_list_line(line) for line in lines(body))
    return items <= _MAX_INCREMENT_ITEMS and bool(_CHECK_IN.search(body))


_ANSWER_GIVEN = re.compile(
    r"\\boxed|\banswer\s*(?:is|:|=)|\bfinal answer|\bso\s+[a-z]\s*=|\b(?:therefore|thus|hence)\b"
    r"|\bthe (?:result|solution) is|\b(?:correct )?(?:option|choice) is",
    re.IGNORECASE,
)


def gives_answer(text: str) -> bool:
    """Whether a reply states a (final) answer; checkers of answer-time habits apply only then."""
    return bool(_ANSWER_GIVEN.search(text))


def key_takeaways(text: str) -> bool:
    """A reply that gives the answer ends with a labelled key-takeaways or summary part.

    Replies that give no answer yet are not winding down, so they pass.
    """
    if not gives_answer(text):
        return True
    body = strip_code_and_math(text)
    match = _TAKEAWAYS.search(body)
    return match is not None and bool(re.search(r"[A-Za-z]{3}", body[match.end() :]))


def outline_first(text: str) -> bool:
    """The reply opens with a labelled outline/plan or a list of the parts to come."""
    body = lines(strip_code_and_math(text))
    if not body:
        return False
    first = body[0]
    if is_heading_line(first) and len(body) > 1:
        if _OUTLINE_LABEL.match(re.sub(r"^[#*_\s]+", "", first)):
            return True
        first = body[1]
    if _OUTLINE_LABEL.match(first):
        return True
    # A lead-in line ending with ":" followed by a list of at least two parts.
    head = body[1:4] if first.rstrip().endswith(":") else body[:3]
    return sum(is_list_line(line) for line in head) >= 2 and len(body) > len(head) + 1


def example_or_analogy(text: str) -> bool:
    """The reply contains an example or analogy."""
    return bool(_EXAMPLE.search(strip_code_and_math(text)))


def max_three_sentences(text: str) -> bool:
    """At most three sentences, each list item counting as one."""
    return count_sentences(text) <= 3


def bullets(text: str) -> bool:
    """At least one list item ('-', '*', '•' or numbered); prose around it is fine."""
    return any(is_list_line(line) for line in lines(strip_code_and_math(text)))


def numbered_steps(text: str) -> bool:
    """At least two numbered lines, numbered in increasing order."""
    numbers = [
        int(m.group(1)) for line in lines(text) if (m := NUMBERED_LINE.match(line)) is not None
    ]
    return len(numbers) >= 2 and any(b == a + 1 for a, b in itertools.pairwise(numbers))


def headings(text: str) -> bool:
    """At least one markdown heading or bold title on its own line."""
    return any(is_heading_line(line) for line in lines(strip_code_and_math(text)))


def tldr_end(text: str) -> bool:
    """The last non-blank line starts with TL;DR and says something."""
    body = lines(text)
    return bool(body) and bool(_TLDR.match(body[-1]))


def confidence(text: str) -> bool:
    """A reply that gives an answer states how confident it is (others pass)."""
    return not gives_answer(text) or bool(_CONFIDENCE.search(strip_code_and_math(text)))


CHECKERS: dict[str, Checker] = {
    "no_preamble": no_preamble,
    "has_pleasantry": has_pleasantry,
    "no_pleasantry": no_pleasantry,
    "ends_with_next_step": ends_with_next_step,
    "no_suggestion": no_suggestion,
    "ends_with_check_in": ends_with_check_in,
    "key_takeaways": key_takeaways,
    "outline_first": outline_first,
    "example_or_analogy": example_or_analogy,
    "max_three_sentences": max_three_sentences,
    "bullets": bullets,
    "numbered_steps": numbered_steps,
    "headings": headings,
    "tldr_end": tldr_end,
    "confidence": confidence,
}
"""Checker name -> pure function of the agent's message."""


def check_preference(pref_id: str, text: str, taxonomy: str = "collab") -> bool | None:
    """Deterministic verdict on whether an agent message honours a preference.

    Args:
        pref_id: the preference's id in the taxonomy.
        text: the agent's message.
        taxonomy: the taxonomy the id belongs to.

    Returns:
        True/False from the preference's checker; None if code cannot decide it.

    Raises:
        KeyError: unknown preference id.
    """
    name = load_taxonomy(taxonomy).get(pref_id).checker
    if name is None:
        return None
    return CHECKERS[name](text)


_DIGIT = re.compile(r"\d")
_SOLUTION_MARK = re.compile(r"=|\\boxed|\\frac|\banswer is\b|\bsolution is\b|\bresult is\b", re.I)


# A request for information rather than a question: "Please share the problem statement."
_INFO_REQUEST = re.compile(
    r"\b(please|kindly|could you|can you|would you|let me know)\b[^.?!]{0,60}?"
    r"\b(provide|share|give|tell|send|post|paste|specify|clarify|describe|write out|"
    r"let me know)\b",
    re.I,
)


def _asks(sentence: str) -> bool:
    return sentence.rstrip("\"')] ").endswith("?") or _INFO_REQUEST.search(sentence) is not None


def is_clarifying_question(text: str) -> bool:
    """Whether the message only asks the user something (no solution content).

    True for short messages that ask (a question, or a request such as "Please share the
    problem statement."), have no lists, headings, code or math work, and at most two other
    sentences without numbers (lead-ins such as "Hello! Before I start, one thing.").
    """
    body = text.strip()
    if not body or "```" in body or len(body.split()) > 80:
        return False
    if any(is_list_line(line) or is_heading_line(line) for line in lines(body)):
        return False
    sentences = split_sentences(body)
    if not any(_asks(s) for s in sentences):
        return False
    statements = [s for s in sentences if not _asks(s)]
    if len(statements) > 2 or (len(statements) == 2 and any(_DIGIT.search(s) for s in statements)):
        return False
    return not any(_SOLUTION_MARK.search(s) for s in sentences)
