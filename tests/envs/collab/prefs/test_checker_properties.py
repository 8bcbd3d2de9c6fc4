from hypothesis import given, settings
from hypothesis import strategies as st

from rapport.envs.collab import CHECKERS, count_sentences, is_clarifying_question

# Words that are not abbreviations, whose trailing dot is ambiguous ("etc.", "vs.").
ABBREVIATIONS = {
    "eg",
    "ie",
    "etc",
    "vs",
    "cf",
    "approx",
    "mr",
    "mrs",
    "ms",
    "dr",
    "prof",
    "jr",
    "sr",
}
words = st.text(alphabet="abcdefghijklmnopqrstuvwxyz", min_size=1, max_size=8).filter(
    lambda w: w not in ABBREVIATIONS | {"fig", "eq"}
)
sentence = st.lists(words, min_size=1, max_size=8).map(lambda ws: " ".join(ws).capitalize() + ".")
any_text = st.text(max_size=300)
items = st.lists(st.lists(words, min_size=1, max_size=5).map(" ".join), min_size=2, max_size=6)


@given(any_text, items, st.sampled_from(["-", "*", "•"]))
def test_adding_a_bullet_list_satisfies_bullets(text: str, entries: list[str], mark: str) -> None:
    listing = "\n".join(f"{mark} {e}" for e in entries)
    assert CHECKERS["bullets"](f"{text}\n\n{listing}\n")


@given(any_text, items)
def test_adding_a_numbered_list_satisfies_numbered_steps(text: str, entries: list[str]) -> None:
    listing = "\n".join(f"{i}. {e}" for i, e in enumerate(entries, start=1))
    assert CHECKERS["numbered_steps"](f"{text}\n\n{listing}")


@given(any_text, st.lists(words, min_size=1, max_size=6).map(" ".join))
def test_appending_a_tldr_line_satisfies_tldr(text: str, gist: str) -> None:
    assert CHECKERS["tldr_end"](f"{text}\nTL;DR: {gist}")


@given(any_text, st.lists(words, min_size=1, max_size=3).map(" ".join))
def test_adding_a_heading_satisfies_headings(text: str, title: str) -> None:
    assert CHECKERS["headings"](f"## {title}\n{text}")


@given(st.lists(sentence, min_size=0, max_size=12))
def test_joined_sentences_are_counted_exactly(sentences: list[str]) -> None:
    assert count_sentences(" ".join(sentences)) == len(sentences)


@given(st.lists(sentence, min_size=1, max_size=6), st.lists(sentence, min_size=1, max_size=6))
def test_sentence_count_adds_over_paragraphs(first: list[str], second: list[str]) -> None:
    a, b = " ".join(first), " ".join(second)
    assert count_sentences(f"{a}\n\n{b}") == count_sentences(a) + count_sentences(b)


@given(st.lists(sentence, min_size=1, max_size=6), st.floats(0.01, 1e6, allow_nan=False))
def test_decimals_do_not_add_sentences(sentences: list[str], number: float) -> None:
    plain = " ".join(sentences)
    with_number = plain[:-1] + f" of {number:.3f}."
    assert count_sentences(with_number) == count_sentences(plain)


@given(st.lists(sentence, min_size=4, max_size=10))
def test_four_or_more_sentences_break_the_limit(sentences: list[str]) -> None:
    assert not CHECKERS["max_three_sentences"](" ".join(sentences))


@settings(max_examples=200)
@given(any_text)
def test_checkers_never_crash_and_opposites_disagree(text: str) -> None:
    for checker in CHECKERS.values():
        assert isinstance(checker(text), bool)
    assert CHECKERS["has_pleasantry"](text) != CHECKERS["no_pleasantry"](text)
    assert isinstance(is_clarifying_question(text), bool)
