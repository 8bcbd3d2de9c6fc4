"""Preference taxonomies (package data) and deterministic checkers for the checkable ones."""

from ._checkers import CHECKERS, Checker, check_preference, gives_answer, is_clarifying_question
from ._taxonomy import Preference, Taxonomy, TaxonomyError, load_taxonomy
from ._text import count_sentences, split_sentences

__all__ = [
    "CHECKERS",
    "Checker",
    "Preference",
    "Taxonomy",
    "TaxonomyError",
    "check_preference",
    "count_sentences",
    "gives_answer",
    "is_clarifying_question",
    "load_taxonomy",
    "split_sentences",
]
