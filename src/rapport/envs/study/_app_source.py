"""The authors' user-study app as a source of problems and preference wordings.

MultiSessionCollab's first author published the app the user study ran on
(``Shuhaibm/collaborative-agents-human-study``). Its ``full_human_study.py`` holds, as
literals, each study's three problems and the preferences participants adopted, and the
notes its memory starts from. `read_app` reads them from a checkout the user supplies
(the file is parsed, never run); `apply_app` lays them into a design at ``create``, so the
run header holds what the study played.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ._design import AppStudy, DesignError, StudyDesign, StudyProblem

APP_FILE = "full_human_study.py"
_LISTS: dict[AppStudy, tuple[str, str]] = {
    "coding": ("CODING_PROBLEMS", "CODING_PREFERENCES"),
    "mixed": ("MIXED_PROBLEMS", "MIXED_PREFERENCES"),
}
_KINDS: dict[AppStudy, list[tuple[str, str]]] = {
    "coding": [
        ("coding", "debugging"),
        ("coding", "implementation"),
        ("coding", "object-oriented design"),
    ],
    "mixed": [("writing", "creative writing"), ("maths", "word problem"), ("coding", "code task")],
}
"""Each study's problems in order, as App. F of the paper names their kinds."""
_NOTES_CALL = "update_agent_notes"


@dataclass(frozen=True)
class AppStudyText:
    """One study of the app: its problems (in session order) and preference wordings."""

    problems: list[StudyProblem]
    preferences: list[str]


@dataclass(frozen=True)
class AppSource:
    """What a checkout of the authors' app gives a study."""

    studies: dict[AppStudy, AppStudyText]
    initial_notes: str
    """What the app's memory update starts from before anything is learned."""
    path: str


def read_app(checkout: str | Path) -> AppSource:
    """The app's problems, preferences and initial notes.

    Raises:
        DesignError: no app file, or one without the lists or the notes update call.
    """
    path = Path(checkout).expanduser() / APP_FILE
    try:
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    except OSError as exc:
        raise DesignError(
            f"problems_from: {path}: cannot read ({exc.strerror or exc}); it takes a checkout "
            "of Shuhaibm/collaborative-agents-human-study"
        ) from exc
    except (SyntaxError, UnicodeDecodeError) as exc:
        raise DesignError(f"problems_from: {path}: not Python ({exc})") from exc
    values = _literals(tree)
    studies = {study: _study(values, study, path) for study in _LISTS}
    return AppSource(studies=studies, initial_notes=_initial_notes(tree, path), path=str(path))


def _literals(tree: ast.Module) -> dict[str, Any]:
    """Module-level names assigned a literal (lists and dicts of strings included)."""
    found: dict[str, Any] = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            target = node.targets[0]
            if isinstance(target, ast.Name):
                try:
                    found[target.id] = ast.literal_eval(node.value)
                except ValueError:
                    continue
    return found


def _study(values: dict[str, Any], study: AppStudy, path: Path) -> AppStudyText:
    problems_name, preferences_name = _LISTS[study]
    raw, preferences = values.get(problems_name), values.get(preferences_name)
    kinds = _KINDS[study]
    if not isinstance(raw, list) or len(raw) != len(kinds):
        raise DesignError(f"problems_from: {path}: no list of {len(kinds)} in {problems_name}")
    if not isinstance(preferences, list) or not all(isinstance(p, str) for p in preferences):
        raise DesignError(f"problems_from: {path}: no list of texts in {preferences_name}")
    problems = []
    for i, (entry, (domain, kind)) in enumerate(zip(raw, kinds, strict=True), start=1):
        text = entry.get("description") if isinstance(entry, dict) else None
        if not isinstance(text, str) or not text.strip():
            raise DesignError(f"problems_from: {path}: {problems_name}[{i - 1}] has no text")
        problems.append(
            StudyProblem(
                id=f"app-{study}-{i}",
                domain=domain,  # type: ignore[arg-type]
                kind=kind,
                title=kind.capitalize(),
                text=text.strip(),
            )
        )
    return AppStudyText(problems=problems, preferences=[" ".join(p.split()) for p in preferences])


def _initial_notes(tree: ast.Module, path: Path) -> str:
    """The string literal the app hands its notes update when there are no notes yet."""
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == _NOTES_CALL
            and node.args
            and isinstance(node.args[0], ast.Constant)
            and isinstance(node.args[0].value, str)
        ):
            return node.args[0].value
    raise DesignError(f"problems_from: {path}: no {_NOTES_CALL} call with initial notes")


def apply_app(design: StudyDesign, source: AppSource) -> StudyDesign:
    """The design with the app's problems and preference wordings in each study type that
    names an ``app_study``, and its initial notes for reflection (unless the design sets
    them).

    Raises:
        DesignError: a type's preferences are not one per app preference.
    """
    raw = design.model_dump(mode="json")
    problems = {p["id"]: p for p in raw["problems"]}
    for t in raw["study_types"]:
        study = t.get("app_study")
        if study is None:
            continue
        text = source.studies[study]
        if len(t["preferences"]) != len(text.preferences):
            raise DesignError(
                f"study_types.{t['id']}: the app's {study} study has {len(text.preferences)} "
                f"preferences; give as many ids in preferences (got {len(t['preferences'])})"
            )
        ids = [p.id for p in text.problems]
        problems.update({p.id: p.model_dump() for p in text.problems})
        t["problem_sets"] = [ids for _ in t["problem_sets"]]
        t["preference_texts"] = list(text.preferences)
    raw["problems"] = list(problems.values())
    if "reflection" in design.conditions:
        reflection = raw["memory_options"].setdefault("reflection", {})
        reflection.setdefault("initial_notes", source.initial_notes)
    raw["problems_from"] = source.path
    return StudyDesign.model_validate(raw)
