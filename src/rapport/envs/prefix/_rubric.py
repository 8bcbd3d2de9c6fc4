"""The UX judges' rubric and instructions: ours (package data, the offline default), or
the paper's, read at run time from a PrefIX checkout the user supplies (``--rubric-from``).

From the checkout: the Likert anchors of ``LIKERT_DEFINITIONS`` in its LLM-as-a-judge
module (read with `ast` as literals; nothing there is run), its ``prompt_template.md``
and its ``persona_descriptions.json``.
"""

from __future__ import annotations

import ast
import json
from collections.abc import Sequence
from pathlib import Path

from pydantic import BaseModel

from rapport.judges import Dimension

from ._options import ALIGNMENT_DIMENSION, judge_instructions, ux_dimensions
from ._settings import Setting

JUDGE_DIR = "gorilla/berkeley-function-call-leaderboard/bfcl_eval/eval_checker/LLM_as_a_judge"
"""Where a PrefIX checkout keeps its judge (the module, the prompt template, the personas)."""
JUDGE_MODULE = "openrouter_judge.py"
PAPER_ALIGNMENT = "interaction_preference_alignment"
"""The paper's alignment dimension (scored apart from UX, as ours)."""
ALIGNMENT_IDS = frozenset({ALIGNMENT_DIMENSION, PAPER_ALIGNMENT})
OWN = "rapport's rubric (package data)"


class RubricError(ValueError):
    """A PrefIX checkout's judge files are missing or not in the expected shape."""


class JudgeRubric(BaseModel):
    """What the UX judges score and are told."""

    dimensions: list[Dimension]
    template: str
    """The judges' instructions; ``{{persona}}`` and ``{{persona_description}}`` are filled
    per session."""
    personas: dict[str, str] = {}
    """Setting id -> the paper's persona description."""
    source: str = OWN

    def instructions(self, settings: Sequence[Setting]) -> str:
        """The instructions for a session whose user holds ``settings``."""
        persona = ", ".join(s.id for s in settings)
        described = " ".join(self.personas.get(s.id, s.definition) for s in settings)
        fills = {
            "{{persona}}": persona,
            "{{persona_description}}": described,
            "{{transcript}}": "(in the next message)",
            "{{likert_definitions}}": "(the rubric below)",
            "{{output_schema}}": "(the JSON object the reply is held to)",
            "{{judge_prompt}}": "",
        }
        text = self.template
        for key, value in fills.items():
            text = text.replace(key, value)
        return text


def own_rubric() -> JudgeRubric:
    """Our rubric and judge prompt."""
    return JudgeRubric(dimensions=list(ux_dimensions()), template=judge_instructions())


def rubric_from(checkout: str | Path) -> JudgeRubric:
    """The paper's rubric and judge prompt from a PrefIX checkout.

    Raises:
        RubricError: a file is missing or not in the expected shape.
    """
    root = Path(checkout).expanduser()
    folder = root / JUDGE_DIR if (root / JUDGE_DIR).is_dir() else root
    module, template = folder / JUDGE_MODULE, folder / "prompt_template.md"
    for path in (module, template):
        if not path.is_file():
            raise RubricError(f"--rubric-from: no {path.name} in {folder}")
    dimensions = _likert(module)
    personas: dict[str, str] = {}
    described = folder / "persona_descriptions.json"
    if described.is_file():
        try:
            rows = json.loads(described.read_text("utf-8"))
            personas = {str(r["persona"]): str(r["description"]) for r in rows}
        except (ValueError, KeyError, TypeError) as exc:
            raise RubricError(f"--rubric-from: {described} is not a list of personas") from exc
    return JudgeRubric(
        dimensions=dimensions,
        template=template.read_text("utf-8"),
        personas=personas,
        source=f"PrefIX checkout ({root.name})",
    )


def _likert(module: Path) -> list[Dimension]:
    """The dimensions of a module's ``LIKERT_DEFINITIONS = {"id": X(anchor_1="...", ...)}``."""
    try:
        tree = ast.parse(module.read_text("utf-8"))
    except SyntaxError as exc:
        raise RubricError(f"--rubric-from: {module} does not parse") from exc
    for node in ast.walk(tree):
        target: ast.expr | None = node.target if isinstance(node, ast.AnnAssign) else None
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            target = node.targets[0]
        value = getattr(node, "value", None)
        named = isinstance(target, ast.Name) and target.id == "LIKERT_DEFINITIONS"
        if named and isinstance(value, ast.Dict):
            return [_dimension(k, v) for k, v in zip(value.keys, value.values, strict=True)]
    raise RubricError(f"--rubric-from: no LIKERT_DEFINITIONS in {module}")


def _dimension(key: ast.expr | None, call: ast.expr) -> Dimension:
    if not isinstance(key, ast.Constant) or not isinstance(call, ast.Call):
        raise RubricError("--rubric-from: LIKERT_DEFINITIONS is not a dict of anchors")
    anchors = {
        int(kw.arg.removeprefix("anchor_")): str(kw.value.value)
        for kw in call.keywords
        if kw.arg and kw.arg.startswith("anchor_") and isinstance(kw.value, ast.Constant)
    }
    if not {1, 3, 5} <= set(anchors):
        raise RubricError(f"--rubric-from: dimension {key.value!r} lacks anchors 1, 3 and 5")
    name = str(key.value).replace("_", " ")
    question = f"How would this user rate the session's {name}?"
    return Dimension(id=str(key.value), name=name.capitalize(), question=question, anchors=anchors)
