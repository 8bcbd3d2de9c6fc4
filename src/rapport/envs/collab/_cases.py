"""Reference verdicts for the checkers and how far the checkers agree with them."""

from __future__ import annotations

import functools
from importlib import resources

import yaml
from pydantic import BaseModel

from ._checkers import check_preference


class CheckerCase(BaseModel):
    """One example reply and whether it honours a preference."""

    pref: str
    text: str
    ok: bool


class CaseResult(CheckerCase):
    """A case with the checker's verdict."""

    checker_ok: bool

    @property
    def agrees(self) -> bool:
        return self.ok == self.checker_ok


class CheckerAgreement(BaseModel):
    """Every case with its checker verdict, and the counts."""

    results: list[CaseResult]

    @property
    def agreeing(self) -> int:
        return sum(r.agrees for r in self.results)

    @property
    def disagreeing(self) -> list[CaseResult]:
        return [r for r in self.results if not r.agrees]

    def per_preference(self) -> dict[str, tuple[int, int]]:
        """Preference id -> (cases, agreeing)."""
        counts: dict[str, tuple[int, int]] = {}
        for r in self.results:
            cases, agreeing = counts.get(r.pref, (0, 0))
            counts[r.pref] = (cases + 1, agreeing + r.agrees)
        return counts


@functools.cache
def checker_cases(taxonomy: str = "collab") -> tuple[CheckerCase, ...]:
    """The packaged reference cases of a taxonomy (``<name>_cases.yaml``)."""
    resource = resources.files(__package__) / "data" / f"{taxonomy}_cases.yaml"
    raw = yaml.safe_load(resource.read_text(encoding="utf-8"))
    return tuple(CheckerCase.model_validate(item) for item in raw["cases"])


def checker_agreement(taxonomy: str = "collab") -> CheckerAgreement:
    """Run every checker on its reference cases.

    Raises:
        ValueError: a case names a preference that has no checker.
    """
    results = []
    for case in checker_cases(taxonomy):
        verdict = check_preference(case.pref, case.text, taxonomy)
        if verdict is None:
            raise ValueError(f"case for '{case.pref}', which has no checker")
        results.append(CaseResult(**case.model_dump(), checker_ok=verdict))
    return CheckerAgreement(results=results)
