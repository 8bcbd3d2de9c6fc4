"""How far the collab checkers agree with the reference cases written from the
MultiSessionCollab preference definitions. Prints one JSON object.

Run:  python benchmarks/collab_checker_agreement.py
"""

from __future__ import annotations

import json

from rapport.envs.collab import checker_agreement


def main() -> None:
    report = checker_agreement()
    print(
        json.dumps(
            {
                "cases": len(report.results),
                "agreeing": report.agreeing,
                "disagreeing": len(report.disagreeing),
                "per_preference": {
                    pref: {"cases": n, "agreeing": ok}
                    for pref, (n, ok) in sorted(report.per_preference().items())
                },
                "disagreements": [
                    {"pref": r.pref, "expected": r.ok, "text": r.text} for r in report.disagreeing
                ],
            },
            indent=2,
        )
    )


if __name__ == "__main__":
    main()
