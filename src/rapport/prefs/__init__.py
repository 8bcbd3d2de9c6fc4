"""Preference taxonomies (package data) of every benchmark.

MultiSessionCollab's taxonomy and the deterministic checkers of its checkable preferences are
exported here; PrefIx's settings and interaction tools are in `rapport.prefs.prefix`, MPT's
latent preference groups in `rapport.prefs.mpt`.
"""

from ._cases import CaseResult, CheckerAgreement, CheckerCase, checker_agreement, checker_cases
from ._checkers import CHECKERS, Checker, check_preference, gives_answer, is_clarifying_question
from ._taxonomy import Preference, Taxonomy, TaxonomyError, load_taxonomy
from ._text import count_sentences, split_sentences

__all__ = [
    "CHECKERS",
    "CaseResult",
    "Checker",
    "CheckerAgreement",
    "CheckerCase",
    "Preference",
    "Taxonomy",
    "TaxonomyError",
    "check_preference",
    "checker_agreement",
    "checker_cases",
    "count_sentences",
    "gives_answer",
    "is_clarifying_question",
    "load_taxonomy",
    "split_sentences",
]
