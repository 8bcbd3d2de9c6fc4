"""The UX judges' rubric and instructions: ours (package data, the offline default), or
the paper's, read at run time from a PrefIX checkout the user supplies (``--rubric-from``).

From the checkout: the Likert anchors of ``LIKERT_DEFINITIONS`` in its LLM-as-a-judge
module and the prompt its runner sends per dimension (the f-string of
``_build_single_dimension_prompt`` and the ``system_instruction`` of
``generate_judgment_with_openrouter``), both read with `ast` as literals, nothing there is
run; its ``prompt_template.md`` (the all-dimensions template, which the runner does not
send) and its ``persona_descriptions.json`` (descriptions and trajectory hints).
"""

from __future__ import annotations

import ast
import json
from collections.abc import Sequence
from importlib import resources
from pathlib import Path

from pydantic import BaseModel

from rapport.judges import Dimension

from ._dimension_judge import DimensionTemplate, Persona
from ._options import ALIGNMENT_DIMENSION, judge_instructions, ux_dimensions
from ._settings import Setting
from ._transcript import expected_pattern

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
    trajectories: dict[str, str] = {}
    """Setting id -> the paper's trajectory hints (``key: a -> b`` lines)."""
    dimension_user: str = ""
    """The per-dimension prompt (see `DimensionTemplate`); empty: ours."""
    dimension_system: str = ""
    """The per-dimension system message; empty: ours."""
    source: str = OWN

    def dimension_template(self) -> DimensionTemplate:
        """The per-dimension prompt the paper's judging sends: the checkout's, or ours."""
        if self.dimension_user:
            return DimensionTemplate(user=self.dimension_user, system=self.dimension_system)
        return DimensionTemplate(user=own_dimension_prompt())

    def persona(self, settings: Sequence[Setting]) -> Persona:
        """Who the judges rate for: the settings, their descriptions and trajectories."""
        return Persona(
            name=", ".join(s.id for s in settings),
            description=" ".join(self.personas.get(s.id, s.definition) for s in settings),
            trajectory="\n".join(
                self.trajectories.get(s.id, f"{s.id}: {expected_pattern(s)}") for s in settings
            ),
        )

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


def own_dimension_prompt() -> str:
    """Our per-dimension judge prompt (package data)."""
    folder = resources.files(__package__)
    return folder.joinpath("dimension_judge_prompt.md").read_text("utf-8")


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
    tree = _parse(module)
    personas, trajectories = _personas(folder / "persona_descriptions.json")
    return JudgeRubric(
        dimensions=_likert(tree, module),
        template=template.read_text("utf-8"),
        personas=personas,
        trajectories=trajectories,
        dimension_user=_f_string(tree, "_build_single_dimension_prompt", None, module),
        dimension_system=_f_string(
            tree, "generate_judgment_with_openrouter", "system_instruction", module
        ),
        source=f"PrefIX checkout ({root.name})",
    )


def _personas(described: Path) -> tuple[dict[str, str], dict[str, str]]:
    """Setting -> description, and setting -> trajectory hints as PrefIX's runner writes
    them (each ``trajectory*`` key as ``key: a -> b``)."""
    if not described.is_file():
        return {}, {}
    try:
        rows = json.loads(described.read_text("utf-8"))
        personas = {str(r["persona"]): str(r["description"]) for r in rows}
        trajectories = {
            str(r["persona"]): "\n".join(
                f"{k}: {' -> '.join(str(x) for x in v)}"
                for k, v in r.items()
                if k.startswith("trajectory") and isinstance(v, list)
            )
            for r in rows
        }
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        raise RubricError(f"--rubric-from: {described} is not a list of personas") from exc
    return personas, trajectories


_FILLS = {
    "persona": "persona",
    "persona_description": "persona_description",
    "persona_trajectory": "persona_trajectory",
    "transcript_text": "transcript",
    "dim_name": "dimension",
    "anchor_text": "anchors",
}
"""PrefIX's names in its judge prompt -> ours in `DimensionTemplate`."""


def _parse(module: Path) -> ast.Module:
    try:
        return ast.parse(module.read_text("utf-8"))
    except SyntaxError as exc:
        raise RubricError(f"--rubric-from: {module} does not parse") from exc


def _f_string(tree: ast.Module, function: str, variable: str | None, module: Path) -> str:
    """A function's f-string (its returned one, or the one assigned to ``variable``) as a
    `DimensionTemplate` text: literal parts kept, PrefIX's names as ``{{ours}}``."""
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef) and node.name == function:
            for inner in ast.walk(node):
                value = _f_value(inner, variable)
                if isinstance(value, ast.JoinedStr):
                    return "".join(_part(v, module) for v in value.values)
    raise RubricError(f"--rubric-from: no judge prompt in {function} of {module}")


def _f_value(node: ast.AST, variable: str | None) -> ast.expr | None:
    if variable is None:
        return node.value if isinstance(node, ast.Return) else None
    if isinstance(node, ast.Assign) and len(node.targets) == 1:
        target = node.targets[0]
        return node.value if isinstance(target, ast.Name) and target.id == variable else None
    return None


def _part(value: ast.expr, module: Path) -> str:
    if isinstance(value, ast.Constant):
        return str(value.value)
    if (
        isinstance(value, ast.FormattedValue)
        and isinstance(value.value, ast.Name)
        and value.value.id in _FILLS
    ):
        return "{{" + _FILLS[value.value.id] + "}}"
    raise RubricError(f"--rubric-from: the judge prompt in {module} fills an unknown value")


def _likert(tree: ast.Module, module: Path) -> list[Dimension]:
    """The dimensions of a module's ``LIKERT_DEFINITIONS = {"id": X(anchor_1="...", ...)}``."""
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
