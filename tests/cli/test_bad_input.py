"""The bad-input promise, case by case: one line naming the problem, exit 2, nothing
created or changed (not the run dir, not its store, not the shared cache).

Each case is a command line (``{tmp}``: a scratch dir; ``{run}``: a finished run dir in it)
and, where it needs one, a setup that writes the bad file first. Commands run from inside
``{run}``, so an empty path read as the working directory would find a run there. The scratch
dir and the private RAPPORT_HOME are fingerprinted before and after: every byte must be as it
was.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import sqlite3
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from rapport.cli import main

pytestmark = pytest.mark.usefixtures("registered")

RUN = [
    "run",
    "scripted",
    "--users",
    "1",
    "--sessions",
    "2",
    "--max-turns",
    "1",
    "--model",
    "all=fake/aware",
    "--no-progress",
    "--run-dir",
]
NEW = [*RUN, "{tmp}/new"]
"""A run into a dir that does not exist yet."""
BARE = ["run", "scripted", "--model", "all=fake/aware", "--no-progress"]
"""A run whose counts and run dir come from the YAML file."""
AGAIN = [*RUN, "{run}"]
"""The finished run's own command (a resume)."""


def _write(name: str, content: str | bytes) -> Callable[[Path], None]:
    def setup(tmp: Path) -> None:
        path = tmp / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content)

    return setup


def _replace_store(kind: str) -> Callable[[Path], None]:
    def setup(tmp: Path) -> None:
        db = tmp / "run" / "run.sqlite"
        for extra in ("run.sqlite-wal", "run.sqlite-shm"):
            (tmp / "run" / extra).unlink(missing_ok=True)
        if kind == "corrupt":
            db.write_bytes(b"SQLite format 3\x00" + os.urandom(3000))
        elif kind == "truncated":
            data = db.read_bytes()
            db.write_bytes(data[: len(data) // 3])
        elif kind == "garbage":
            db.write_bytes(b"this is not a database\n" * 50)
        elif kind == "empty":
            db.write_bytes(b"")
        elif kind == "directory":
            db.unlink()
            db.mkdir()
        elif kind == "foreign":
            db.unlink()
            conn = sqlite3.connect(db)
            conn.execute("CREATE TABLE notes (text TEXT)")
            conn.commit()
            conn.close()

    return setup


def _damage_row(sql: str, *, keep: str = "") -> Callable[[Path], None]:
    """Run `sql` on the finished run's store (a row's JSON body damaged, say); with `keep`,
    also write that file beside it, which the command must leave as it was."""

    def setup(tmp: Path) -> None:
        conn = sqlite3.connect(tmp / "run" / "run.sqlite")
        conn.executescript(sql)
        conn.commit()
        conn.close()
        if keep:
            (tmp / keep).write_text("an earlier export\n")

    return setup


def _home_is_a_file(tmp: Path) -> None:
    home = Path(os.environ["RAPPORT_HOME"])
    shutil.rmtree(home, ignore_errors=True)
    home.parent.mkdir(parents=True, exist_ok=True)
    home.write_text("not a directory\n")


def _copy_store(tmp: Path) -> None:
    shutil.copy(tmp / "run" / "run.sqlite", tmp / "other.sqlite")


def _home_cache(content: bytes) -> Callable[[Path], None]:
    def setup(tmp: Path) -> None:
        home = Path(os.environ["RAPPORT_HOME"])
        home.mkdir(parents=True, exist_ok=True)
        (home / "cache.sqlite").write_bytes(content)

    return setup


def _deep(depth: int) -> str:
    return '{"a":' * depth + "1" + "}" * depth


def _yaml(text: str) -> Callable[[Path], None]:
    return _write("c.yaml", text)


BAD_SESSION = "UPDATE sessions SET body = '{not json'"
BAD_RUN = "UPDATE run SET body = '{not json'"
WRONG_RUN = "UPDATE run SET body = '{\"id\": 3}'"
BAD_MEMORY = "UPDATE memory_versions SET body = '[]'"
_PROFILE = {"preferences": ["You like replies in bullet-point format."], "i": 0}
COLLAB = ["run", "collab", "--model", "all=scripted/echo", "--run-dir", "{tmp}/new"]
CFG = "--config", "{tmp}/c.yaml", "--run-dir", "{tmp}/new"
PREFIX = ["run", "prefix", "--sessions", "1", "--model", "all=scripted/echo"]
PREFIX += ["--no-progress", "--run-dir", "{tmp}/new"]
GYM = ["run", "gym", "--users", "1", "--model", "all=scripted/echo", "--no-progress"]
GYM += ["--run-dir", "{tmp}/new"]
MPT = ["run", "mpt", "--users", "1", "--model", "all=scripted/echo", "--no-progress"]
MPT += ["--run-dir", "{tmp}/new"]
COLLAB_CFG = ["run", "collab", "--model", "all=scripted/echo", *CFG]
NOT_UTF8 = "UPDATE {} SET body = CAST(x'ff' AS TEXT)"
VIEW = ["view", "{tmp}/nowhere"]
"""No run there: a port the old code let through ends in 'no run found', never a server."""
SERVE = ["serve-model", "--model", "llamacpp/{tmp}/none.gguf"]
"""A missing model file: a value let through ends before any server process starts."""
TRAIN_DATA = ["train", "data", "{run}", "--out", "{tmp}/td"]
REFLECT = ["train", "reflect", "--model", "scripted/echo", "--data", "{tmp}/x.jsonl"]
NO_EXAMPLES = _write("x.jsonl", "")

# (id, argv, setup, a word the one line must contain)
Case = tuple[str, list[str], Callable[[Path], None] | None, str]
CASES: list[Case] = [
    # --- what failed before (the 25 and their neighbours) ---
    ("yaml-options-int", [*BARE, *CFG], _yaml("options: 3\n"), "options"),
    ("yaml-options-str", [*BARE, *CFG], _yaml("options: abc\n"), "options"),
    ("yaml-options-list", [*BARE, *CFG], _yaml("options: [1, 2]\n"), "options"),
    ("yaml-int-key", [*BARE, *CFG], _yaml("1: 2\n"), "key"),
    ("yaml-int-option-key", [*BARE, *CFG], _yaml("options: {1: 2}\n"), "key"),
    ("yaml-memory-options-int-key", [*BARE, *CFG], _yaml("memory_options: {1: {}}\n"), "memory"),
    ("yaml-memory-options-not-map", [*BARE, *CFG], _yaml("memory_options: 3\n"), "memory_options"),
    ("yaml-binary", [*BARE, *CFG], _write("c.yaml", b"\xff\xfe\x00\x81binary"), "c.yaml"),
    ("yaml-deep", [*BARE, *CFG], _yaml("a: " + "[" * 5000 + "]" * 5000 + "\n"), "c.yaml"),
    ("yaml-users-float-huge", [*BARE, *CFG], _yaml("users: 1.0e20\n"), "users"),
    ("yaml-models-not-map", [*BARE, *CFG], _yaml("models: 3\n"), "models"),
    ("yaml-models-int-role", [*BARE, *CFG], _yaml("models: {1: fake/aware}\n"), "models"),
    (
        "deep-dataset",
        [*COLLAB, "--problems", "{tmp}/deep.jsonl"],
        _write("deep.jsonl", _deep(5000) + "\n"),
        "deep.jsonl",
    ),
    ("run-dir-is-file", [*RUN, "{tmp}/afile"], _write("afile", "x"), "afile"),
    ("run-dir-under-file", [*RUN, "{tmp}/afile/run"], _write("afile", "x"), "afile"),
    ("run-dir-unwritable", [*RUN, "/proc/rapport-run"], None, "/proc"),
    ("store-corrupt", AGAIN, _replace_store("corrupt"), "run.sqlite"),
    ("store-truncated", AGAIN, _replace_store("truncated"), "run.sqlite"),
    ("store-garbage", AGAIN, _replace_store("garbage"), "run.sqlite"),
    ("store-directory", AGAIN, _replace_store("directory"), "run.sqlite"),
    ("store-foreign", AGAIN, _replace_store("foreign"), "run.sqlite"),
    ("report-store-corrupt", ["report", "{run}"], _replace_store("corrupt"), "run.sqlite"),
    ("report-store-truncated", ["report", "{run}"], _replace_store("truncated"), "run.sqlite"),
    ("report-store-directory", ["report", "{run}"], _replace_store("directory"), "run.sqlite"),
    ("report-store-foreign", ["report", "{run}"], _replace_store("foreign"), "run.sqlite"),
    ("report-store-empty", ["report", "{run}"], _replace_store("empty"), "no run"),
    ("cache-corrupt", NEW, _home_cache(b"SQLite format 3\x00" + b"\x07" * 4000), "cache"),
    ("cache-garbage", NEW, _home_cache(b"not sqlite at all\n" * 100), "cache"),
    ("users-1e20", [*NEW, "--users", "100000000000000000000"], None, "users"),
    ("sessions-1e12", [*NEW, "--sessions", "1000000000000"], None, "sessions"),
    ("max-turns-1e12", [*NEW, "--max-turns", "1000000000000"], None, "max_turns"),
    ("concurrency-huge", [*NEW, "--concurrency", "1000000000"], None, "concurrency"),
    ("seed-huge", [*NEW, "--seed", "1" + "0" * 40], None, "seed"),
    ("memory-comma", [*NEW, "--memory", ","], None, "memory"),
    ("memory-empty", [*NEW, "--memory", ""], None, "memory"),
    ("unknown-role", [*NEW, "--model", "agnet=fake/aware"], None, "agnet"),
    ("unknown-role-yaml", [*BARE, *CFG], _yaml("models: {agnet: fake/aware}\n"), "agnet"),
    (
        "unknown-memory-options",
        [*BARE, *CFG],
        _yaml("memory: [none]\nmemory_options: {reflektion: {k: 1}}\n"),
        "reflektion",
    ),
    (
        "library-out-under-file",
        ["library", "export", "{run}", "--out", "{tmp}/afile/x.md"],
        _write("afile", "x"),
        "afile",
    ),
    (
        "library-out-store",
        ["library", "export", "{run}", "--out", "{run}/run.sqlite"],
        None,
        "run.sqlite",
    ),
    ("library-out-dir", ["library", "export", "{run}", "--out", "{tmp}"], None, "directory"),
    (
        "report-html-under-file",
        ["report", "{run}", "--html", "{tmp}/afile/r.html"],
        _write("afile", "x"),
        "afile",
    ),
    (
        "report-html-missing-dir",
        ["report", "{run}", "--html", "/proc/no/such/r.html"],
        None,
        "no/such",
    ),
    ("report-html-store", ["report", "{run}", "--html", "{run}/run.sqlite"], None, "run.sqlite"),
    ("report-html-wal", ["report", "{run}", "--html", "{run}/run.sqlite-wal"], None, "run.sqlite"),
    (
        "report-html-other-store",
        ["report", "{run}", "--html", "{tmp}/other.sqlite"],
        _copy_store,
        "store",
    ),
    (
        "export-out-store",
        ["export", "{run}", "--format", "jsonl", "--out", "{run}/run.sqlite"],
        None,
        "run.sqlite",
    ),
    (
        "export-out-under-file",
        ["export", "{run}", "--format", "jsonl", "--out", "{tmp}/afile/s.jsonl"],
        _write("afile", "x"),
        "afile",
    ),
    ("max-failures-bad", [*NEW, "--max-failures", "lots"], None, "max-failures"),
    ("model-unknown-setting", [*NEW, "--model", "agent=openai/x,colour=blue"], None, "colour"),
    ("model-bad-timeout", [*NEW, "--model", "agent=openai/x,timeout=-1"], None, "timeout"),
    ("model-setting-no-value", [*NEW, "--model", "agent=openai/x,timeout"], None, "KEY=VALUE"),
    (
        "model-key-var-unset",
        [*NEW, "--model", "agent=openai/x,api_key_env=NO_SUCH_VAR_21"],
        None,
        "NO_SUCH_VAR_21",
    ),
    (
        "model-server-unreachable",
        [*NEW, "--model", "agent=openai/x,base_url=http://127.0.0.1:9/v1"],
        None,
        "cannot reach",
    ),
    ("model-role-unused", [*NEW, "--model", "judge=fake/aware"], None, "judge"),
    ("model-role-unused-yaml", [*BARE, *CFG], _yaml("models: {memory: {seed: 1}}\n"), "memory"),
    ("model-bad-sampling", [*NEW, "--model", "agent=fake/aware,temperature=hot"], None, "temp"),
    ("model-bad-top-p", [*NEW, "--model", "user=fake/aware,top_p=2"], None, "top_p"),
    (
        "model-sampling-changed-on-resume",
        [*AGAIN, "--model", "user=fake/aware,temperature=0.9"],
        None,
        "sampling",
    ),
    ("cache-clear-corrupt", ["cache", "clear"], _home_cache(b"not sqlite at all\n" * 100), "cache"),
    ("cache-bad-action", ["cache", "burn"], None, "burn"),
    # --- hostile inputs found in a later sweep ---
    ("users-underscore", [*NEW, "--users", "1_0"], None, "whole number"),
    ("users-full-width", [*NEW, "--users", "\uff11"], None, "whole number"),
    ("sessions-unicode-digit", [*NEW, "--sessions", "\u0663"], None, "whole number"),
    ("run-dir-empty", [*RUN, ""], None, "run_dir"),
    ("yaml-run-dir-empty", [*BARE, "--config", "{tmp}/c.yaml"], _yaml('run_dir: ""\n'), "run_dir"),
    ("prefix-unknown-option", [*PREFIX, "--conditon", "p"], None, "conditon"),
    ("gym-max-turns-unused", [*GYM, "--max-turns", "5"], None, "does not use --max-turns"),
    ("gym-sessions-unused", [*GYM, "--sessions", "2"], None, "does not use --sessions"),
    ("mpt-max-turns-unused", [*MPT, "--max-turns", "3"], None, "does not use --max-turns"),
    ("prefix-users-unused", [*PREFIX, "--users", "2"], None, "does not use --users"),
    (
        "prefix-unknown-yaml-key",
        [*PREFIX, "--config", "{tmp}/c.yaml"],
        _yaml("setings: x\n"),
        "setings",
    ),
    ("prefix-settings-empty", [*PREFIX, "--settings", ","], None, "settings"),
    ("prefix-settings-twice", [*PREFIX, "--settings", "tool_low,all"], None, "tool_low"),
    ("prefix-condition-empty", [*PREFIX, "--condition", ""], None, "condition"),
    ("prefix-categories-empty", [*PREFIX, "--categories", ","], None, "categories"),
    ("gym-env-empty", [*GYM, "--env", ","], None, "env"),
    ("gym-env-twice", [*GYM, "--env", "function,function"], None, "twice"),
    ("gym-yaml-env-int", [*GYM, "--config", "{tmp}/c.yaml"], _yaml("env: 3\n"), "env"),
    ("gym-yaml-env-nested", [*GYM, "--config", "{tmp}/c.yaml"], _yaml("env: [[a]]\n"), "env"),
    ("gym-eval-episodes-huge", [*GYM, "--eval-episodes", "1000000000000"], None, "eval_episodes"),
    ("gym-train-episodes-huge", [*GYM, "--train-episodes", "1000000000"], None, "train_episodes"),
    ("gym-repeat-retries-huge", [*GYM, "--repeat-retries", "1000000000"], None, "repeat_retries"),
    ("report-session-not-json", ["report", "{run}"], _damage_row(BAD_SESSION), "damaged"),
    ("report-run-not-json", ["report", "{run}"], _damage_row(BAD_RUN), "damaged"),
    ("report-run-wrong-shape", ["report", "{run}"], _damage_row(WRONG_RUN), "damaged"),
    ("view-session-not-json", ["view", "{run}"], _damage_row(BAD_RUN), "damaged"),
    ("view-no-run-header", ["view", "{run}"], _damage_row("DELETE FROM run"), "no run"),
    ("view-store-corrupt", ["view", "{run}"], _replace_store("corrupt"), "run.sqlite"),
    ("view-store-foreign", ["view", "{run}"], _replace_store("foreign"), "run.sqlite"),
    ("view-store-empty", ["view", "{run}"], _replace_store("empty"), "no run"),
    (
        "library-memory-not-json",
        ["library", "show", "{run}", "--condition", "none"],
        _damage_row(BAD_MEMORY),
        "damaged",
    ),
    (
        "export-session-not-json",
        ["export", "{run}", "--format", "jsonl", "--out", "{tmp}/kept.jsonl"],
        _damage_row(BAD_SESSION, keep="kept.jsonl"),
        "damaged",
    ),
    (
        "export-store-empty",
        ["export", "{run}", "--format", "jsonl"],
        _replace_store("empty"),
        "no run",
    ),
    ("export-out-empty", ["export", "{run}", "--format", "jsonl", "--out", ""], None, "--out"),
    ("library-out-empty", ["library", "export", "{run}", "--out", ""], None, "--out"),
    ("report-html-empty", ["report", "{run}", "--html", ""], None, "--html"),
    (
        "train-data-other-benchmark",
        ["train", "data", "{run}", "--out", "{tmp}/td"],
        None,
        "collab runs",
    ),
    (
        "train-data-session-not-json",
        ["train", "data", "{run}", "--out", "{tmp}/td"],
        _damage_row(f"DELETE FROM run; {BAD_SESSION}"),
        "damaged",
    ),
    ("run-home-is-a-file", NEW, _home_is_a_file, "RAPPORT_HOME"),
    ("cache-info-home-is-a-file", ["cache", "info"], _home_is_a_file, "RAPPORT_HOME"),
    (
        "collab-profiles-repeated-id",
        [*COLLAB, "--users", "2", "--profiles", "{tmp}/p.json"],
        _write("p.json", json.dumps([_PROFILE, _PROFILE])),
        "repeats",
    ),
    (
        "collab-profiles-index-null",
        [*COLLAB, "--profiles", "{tmp}/p.json"],
        _write("p.json", json.dumps([{**_PROFILE, "i": None}])),
        "'i'",
    ),
    (
        "collab-problems-gold-infinite",
        [*COLLAB, "--problems", "{tmp}/p.jsonl"],
        _write("p.jsonl", '{"query": "q", "choices": ["(A)a", "(B)b"], "gold": 1e400}\n'),
        "p.jsonl",
    ),
    (
        "mpt-data-without-release",
        [*MPT, "--data", "{tmp}/d.json"],
        _write("d.json", "[]"),
        "release",
    ),
    ("mpt-dataset-without-release", [*MPT, "--dataset", "tiny-v1"], None, "release"),
    ("prefix-judge-repeats-huge", [*PREFIX, "--judge-repeats", "1000000000"], None, "judge"),
    # --- a third sweep: damaged stores, empty values, YAML, loaders' inner types ---
    (
        "report-store-table-missing",
        ["report", "{run}"],
        _damage_row("DROP TABLE sessions"),
        "table",
    ),
    (
        "report-session-not-utf8",
        ["report", "{run}"],
        _damage_row(NOT_UTF8.format("sessions")),
        "UTF",
    ),
    ("view-run-not-utf8", ["view", "{run}"], _damage_row(NOT_UTF8.format("run")), "run.sqlite"),
    ("resume-sessions-dropped", AGAIN, _damage_row("DROP TABLE sessions"), "sessions table"),
    ("resume-run-not-utf8", AGAIN, _damage_row(NOT_UTF8.format("run")), "run.sqlite"),
    (
        "export-store-table-missing",
        ["export", "{run}", "--format", "jsonl", "--out", "{tmp}/kept.jsonl"],
        _damage_row("DROP TABLE sessions", keep="kept.jsonl"),
        "without its sessions table",
    ),
    (
        "library-store-table-missing",
        ["library", "show", "{run}", "--condition", "none"],
        _damage_row("DROP TABLE memory_versions"),
        "without its memory_versions table",
    ),
    (
        "train-data-store-table-missing",
        ["train", "data", "{run}", "--out", "{tmp}/td"],
        _damage_row("DELETE FROM run; DROP TABLE sessions"),
        "run.sqlite",
    ),
    ("config-empty-name", [*NEW, "--config", ""], None, "--config"),
    ("yaml-key-twice", [*BARE, *CFG], _yaml("users: 5\nusers: 1\n"), "given twice"),
    ("yaml-users-boolean", [*BARE, *CFG], _yaml("users: true\n"), "boolean"),
    ("yaml-other-benchmark", [*BARE, *CFG], _yaml("benchmark: collab\n"), "'collab'"),
    ("yaml-option-empty", COLLAB_CFG, _yaml("profiles: ''\n"), "profiles"),
    ("yaml-options-entry-empty", COLLAB_CFG, _yaml("options: {problems: ' '}\n"), "problems"),
    ("option-empty", [*COLLAB, "--problems", ""], None, "--problems"),
    ("option-empty-equals", [*COLLAB, "--profiles="], None, "--profiles"),
    ("mpt-release-empty", [*MPT, "--release", ""], None, "--release"),
    ("mpt-dates-unknown", [*MPT, "--dates", "iso"], None, "dates"),
    (
        "mpt-dates-with-month-dates",
        [*MPT, "--dates", "dateparser", "--month-dates", "true"],
        None,
        "month_dates",
    ),
    ("prefix-tasks-huge", [*PREFIX, "--tasks", "1000000000"], None, "tasks"),
    (
        "collab-problems-choice-list",
        [*COLLAB, "--problems", "{tmp}/p.jsonl"],
        _write("p.jsonl", '{"question": "q", "choices": [["a"], "b"], "answer": 0}\n'),
        "p.jsonl",
    ),
    (
        "collab-profiles-preference-list",
        [*COLLAB, "--users", "1", "--profiles", "{tmp}/p.json"],
        _write("p.json", json.dumps([{**_PROFILE, "preferences": [_PROFILE["preferences"]]}])),
        "must be text",
    ),
    (
        "collab-problems-key-twice",
        [*COLLAB, "--problems", "{tmp}/p.jsonl"],
        _write(
            "p.jsonl",
            '{"question": "q", "choices": ["a", "b"], "answer": 0, "answer": 1}\n',
        ),
        "'answer' is given twice",
    ),
    (
        "collab-profiles-key-twice",
        [*COLLAB, "--users", "1", "--profiles", "{tmp}/p.json"],
        _write(
            "p.json",
            '[{"preferences": ["You like replies in bullet-point format."], "i": 0, "i": 1}]',
        ),
        "'i' is given twice",
    ),
    (
        "collab-personas-key-twice",
        [*COLLAB, "--personas", "{tmp}/p.jsonl"],
        _write("p.jsonl", '{"persona": "a nurse", "persona": "a pilot"}\n'),
        "'persona' is given twice",
    ),
    (
        "benchmark-entry-not-a-benchmark",
        ["run", "os:system", "--model", "all=scripted/echo", "--run-dir", "{tmp}/new"],
        None,
        "not a Benchmark subclass",
    ),
    (
        "benchmark-entry-abstract",
        ["run", "rapport.envs:Benchmark", "--model", "all=scripted/echo", "--run-dir", "{tmp}/n"],
        None,
        "abstract",
    ),
    # --- numeric flags outside `run`, and empty run dirs ---
    ("view-port-underscore", [*VIEW, "--port", "1_0"], None, "--port"),
    ("view-port-full-width", [*VIEW, "--port", "\uff18\uff10"], None, "--port"),
    ("view-port-plus", [*VIEW, "--port", "+80"], None, "--port"),
    ("view-port-empty", [*VIEW, "--port", ""], None, "--port"),
    ("view-port-too-big", [*VIEW, "--port", "70000"], None, "--port"),
    ("view-port-negative", [*VIEW, "--port", "-1"], None, "--port"),
    ("serve-port-underscore", [*SERVE, "--port", "1_0"], None, "--port"),
    ("serve-port-full-width", [*SERVE, "--port", "\uff18\uff10"], None, "--port"),
    ("serve-port-too-big", [*SERVE, "--port", "70000"], None, "--port"),
    ("serve-port-empty", [*SERVE, "--port", ""], None, "--port"),
    ("serve-n-ctx-zero", [*SERVE, "--n-ctx", "0"], None, "--n-ctx"),
    ("serve-n-ctx-negative", [*SERVE, "--n-ctx", "-8192"], None, "--n-ctx"),
    ("serve-n-ctx-huge", [*SERVE, "--n-ctx", "1" + "0" * 12], None, "--n-ctx"),
    ("serve-n-ctx-underscore", [*SERVE, "--n-ctx", "8_192"], None, "--n-ctx"),
    ("serve-n-ctx-full-width", [*SERVE, "--n-ctx", "\uff18\uff11\uff19\uff12"], None, "--n-ctx"),
    ("train-data-fraction-nan", [*TRAIN_DATA, "--eval-fraction", "nan"], None, "--eval-fraction"),
    ("train-data-fraction-inf", [*TRAIN_DATA, "--eval-fraction", "inf"], None, "--eval-fraction"),
    ("train-data-fraction-1e999", [*TRAIN_DATA, "--eval-fraction", "1e999"], None, "--eval-"),
    ("train-data-fraction-one", [*TRAIN_DATA, "--eval-fraction", "1"], None, "--eval-fraction"),
    ("train-data-fraction-minus", [*TRAIN_DATA, "--eval-fraction", "-0.1"], None, "--eval-"),
    ("train-data-fraction-underscore", [*TRAIN_DATA, "--eval-fraction", "0.1_5"], None, "--eval"),
    (
        "train-data-fraction-full-width",
        [*TRAIN_DATA, "--eval-fraction", "\uff10.\uff15"],
        None,
        "--eval",
    ),
    ("train-data-fraction-empty", [*TRAIN_DATA, "--eval-fraction", ""], None, "--eval-fraction"),
    ("train-data-seed-negative", [*TRAIN_DATA, "--seed", "-1"], None, "--seed"),
    ("train-data-seed-underscore", [*TRAIN_DATA, "--seed", "1_0"], None, "--seed"),
    ("train-data-seed-huge", [*TRAIN_DATA, "--seed", "1" + "0" * 25], None, "--seed"),
    ("train-data-seed-empty", [*TRAIN_DATA, "--seed", ""], None, "--seed"),
    ("train-data-out-empty", ["train", "data", "{run}", "--out", ""], None, "--out"),
    ("train-data-run-dir-empty", ["train", "data", "", "--out", "{tmp}/td"], None, "RUN_DIR"),
    ("sft-out-empty", ["train", "sft", "--config", "cpu-smoke", "--out", ""], None, "--out"),
    ("grpo-out-empty", ["train", "grpo", "--config", "cpu-smoke", "--out", " "], None, "--out"),
    ("sft-data-empty", ["train", "sft", "--config", "cpu-smoke", "--data", ""], None, "--data"),
    ("reflect-n-zero", [*REFLECT, "-n", "0"], NO_EXAMPLES, "-n"),
    ("reflect-n-negative", [*REFLECT, "-n", "-3"], NO_EXAMPLES, "-n"),
    ("reflect-n-underscore", [*REFLECT, "-n", "1_0"], NO_EXAMPLES, "-n"),
    ("reflect-n-full-width", [*REFLECT, "-n", "\uff14"], NO_EXAMPLES, "-n"),
    ("reflect-n-huge", [*REFLECT, "-n", "1" + "0" * 12], NO_EXAMPLES, "-n"),
    ("reflect-max-tokens-zero", [*REFLECT, "--max-tokens", "0"], NO_EXAMPLES, "--max-tokens"),
    ("reflect-max-tokens-huge", [*REFLECT, "--max-tokens", "9" * 9], NO_EXAMPLES, "--max-tokens"),
    ("reflect-max-tokens-underscore", [*REFLECT, "--max-tokens", "2_56"], NO_EXAMPLES, "--max-"),
    ("reflect-max-tokens-empty", [*REFLECT, "--max-tokens", ""], NO_EXAMPLES, "--max-tokens"),
    ("view-run-dir-empty", ["view", ""], None, "RUN_DIR"),
    ("view-run-dir-is-file", ["view", "{tmp}/afile"], _write("afile", "x"), "afile"),
    ("view-run-dir-is-store", ["view", "{run}/run.sqlite"], None, "run.sqlite"),
    ("library-show-run-dir-empty", ["library", "show", ""], None, "RUN_DIR"),
    ("library-export-run-dir-empty", ["library", "export", ""], None, "RUN_DIR"),
    (
        "library-show-run-dir-is-file",
        ["library", "show", "{tmp}/afile"],
        _write("afile", "x"),
        "afile",
    ),
    ("library-export-run-dir-missing", ["library", "export", "{tmp}/nowhere"], None, "nowhere"),
    ("export-run-dir-empty", ["export", "", "--format", "jsonl"], None, "RUN_DIR"),
    (
        "export-run-dir-is-file",
        ["export", "{tmp}/afile", "--format", "jsonl"],
        _write("afile", "x"),
        "afile",
    ),
    ("report-run-dir-empty", ["report", ""], None, "DIR"),
    # --- what held before ---
    ("unknown-benchmark", ["run", "nosuch", "--run-dir", "{tmp}/new"], None, "nosuch"),
    ("unknown-memory", [*NEW, "--memory", "nope"], None, "nope"),
    ("unknown-memory-in-list", [*NEW, "--memory", "none,nope"], None, "nope"),
    ("duplicate-memory", [*NEW, "--memory", "none,none"], None, "duplicate"),
    ("unknown-provider", [*NEW, "--model", "all=bogus/x"], None, "bogus"),
    ("missing-gguf", [*NEW, "--model", "all=llamacpp/{tmp}/missing.gguf"], None, "missing.gguf"),
    (
        "corrupt-gguf",
        [*NEW, "--model", "all=llamacpp/{tmp}/b.gguf"],
        _write("b.gguf", b"not a gguf"),
        "gguf",
    ),
    ("unknown-scripted", [*NEW, "--model", "all=scripted/nope"], None, "scripted/nope"),
    ("unknown-fake", [*NEW, "--model", "all=fake/nope"], None, "nope"),
    ("model-no-spec", [*NEW, "--model", "agent="], None, "ROLE=SPEC"),
    ("model-no-role", [*NEW, "--model", "=fake/aware"], None, "ROLE=SPEC"),
    ("users-negative", [*NEW, "--users", "-2"], None, "users"),
    ("users-zero", [*NEW, "--users", "0"], None, "users"),
    ("users-word", [*NEW, "--users", "many"], None, "whole number"),
    ("users-float", [*NEW, "--users", "1.5"], None, "whole number"),
    ("users-sci", [*NEW, "--users", "1e20"], None, "whole number"),
    ("sessions-zero", [*NEW, "--sessions", "0"], None, "sessions"),
    ("sessions-word", [*NEW, "--sessions", "x"], None, "whole number"),
    ("sessions-sci", [*NEW, "--sessions", "1e12"], None, "whole number"),
    ("max-turns-zero", [*NEW, "--max-turns", "0"], None, "max_turns"),
    ("max-turns-word", [*NEW, "--max-turns", "ten"], None, "whole number"),
    ("max-turns-sci", [*NEW, "--max-turns", "1e12"], None, "whole number"),
    ("concurrency-zero", [*NEW, "--concurrency", "0"], None, "concurrency"),
    ("seed-word", [*NEW, "--seed", "abc"], None, "whole number"),
    ("unknown-option", [*NEW, "--delay", "soon"], None, "delay"),
    ("unknown-option-2", [*NEW, "--colour", "blue"], None, "colour"),
    ("stray-argument", [*NEW, "stray"], None, "stray"),
    ("config-absent", [*NEW, "--config", "{tmp}/absent.yaml"], None, "absent.yaml"),
    ("config-bad-yaml", [*BARE, *CFG], _yaml("users: [1,\n  sessions: }\n"), "bad YAML"),
    ("config-list", [*BARE, *CFG], _yaml("- a\n- b\n"), "mapping"),
    ("config-scalar", [*BARE, *CFG], _yaml("42\n"), "mapping"),
    ("config-is-dir", [*NEW, "--config", "{tmp}"], None, "config"),
    ("yaml-users-word", [*BARE, *CFG], _yaml("users: many\n"), "users"),
    ("yaml-users-negative", [*BARE, *CFG], _yaml("users: -1\n"), "users"),
    ("yaml-unknown-memory", [*BARE, *CFG], _yaml("memory: [nope]\n"), "nope"),
    ("yaml-unknown-option", [*BARE, *CFG], _yaml("colour: blue\n"), "colour"),
    ("yaml-memory-not-list", [*BARE, *CFG], _yaml("memory: {a: 1}\n"), "memory"),
    ("yaml-run-dir-list", [*BARE, "--config", "{tmp}/c.yaml"], _yaml("run_dir: [a]\n"), "run_dir"),
    ("changed-config", [*AGAIN, "--seed", "3"], None, "seed"),
    ("changed-memory", [*AGAIN, "--memory", "notes"], None, "memory"),
    (
        "collab-absent-dataset",
        [
            "run",
            "collab",
            "--problems",
            "{tmp}/absent.jsonl",
            "--model",
            "all=scripted/echo",
            "--run-dir",
            "{tmp}/new",
        ],
        None,
        "absent.jsonl",
    ),
    (
        "collab-bad-option",
        [
            "run",
            "collab",
            "--problems",
            "nonsense-pool",
            "--model",
            "all=scripted/echo",
            "--run-dir",
            "{tmp}/new",
        ],
        None,
        "nonsense",
    ),
    (
        "gym-unknown-env",
        ["run", "gym", "--env", "nosuch", "--model", "all=scripted/echo", "--run-dir", "{tmp}/new"],
        None,
        "nosuch",
    ),
    (
        "gym-bad-horizon",
        ["run", "gym", "--horizon", "0", "--model", "all=scripted/echo", "--run-dir", "{tmp}/new"],
        None,
        "horizon",
    ),
    (
        "prefix-bad-setting",
        [
            "run",
            "prefix",
            "--settings",
            "nosuch",
            "--model",
            "all=scripted/echo",
            "--run-dir",
            "{tmp}/new",
        ],
        None,
        "nosuch",
    ),
    (
        "mpt-bad-option",
        ["run", "mpt", "--nonsense", "1", "--model", "all=scripted/echo", "--run-dir", "{tmp}/new"],
        None,
        "nonsense",
    ),
    (
        "prime-on-collab",
        [
            "run",
            "collab",
            "--memory",
            "prime",
            "--model",
            "all=scripted/echo",
            "--run-dir",
            "{tmp}/new",
        ],
        None,
        "prime",
    ),
    ("report-missing-dir", ["report", "{tmp}/nowhere"], None, "nowhere"),
    ("report-no-store", ["report", "{tmp}"], None, "run.sqlite"),
    ("report-html-is-dir", ["report", "{run}", "--html", "{tmp}"], None, "directory"),
    ("library-no-run", ["library", "show", "{tmp}/nowhere"], None, "nowhere"),
    ("library-no-library", ["library", "show", "{run}"], None, "library"),
    ("export-no-run", ["export", "{tmp}/nowhere", "--format", "jsonl"], None, "nowhere"),
    (
        "export-out-dir",
        ["export", "{run}", "--format", "jsonl", "--out", "{tmp}"],
        None,
        "directory",
    ),
    (
        "export-out-missing-dir",
        ["export", "{run}", "--format", "jsonl", "--out", "{tmp}/no/s.jsonl"],
        None,
        "no",
    ),
    ("view-no-run", ["view", "{tmp}/nowhere"], None, "nowhere"),
    ("train-data-no-run", ["train", "data", "{tmp}/nowhere", "--out", "{tmp}/td"], None, "nowhere"),
    ("unknown-command", ["fly"], None, "fly"),
    ("report-bad-format", ["report", "{run}", "--format", "yaml"], None, "format"),
    ("run-no-benchmark", ["run"], None, "benchmark"),
    ("models-bad-action", ["models", "destroy"], None, "destroy"),
    ("export-bad-format", ["export", "{run}", "--sessions", "xml"], None, "xml"),
]


def _fingerprint(*roots: Path) -> dict[str, str]:
    """Every path under the roots with its kind and content hash."""
    seen: dict[str, str] = {}
    for root in roots:
        if not root.exists():
            continue
        for path in sorted(root.rglob("*")):
            if path.is_dir():
                seen[str(path)] = "dir"
            elif path.name.endswith("-shm") or (
                path.name.endswith("-wal") and not path.stat().st_size
            ):
                continue  # SQLite's shared-memory index and an empty log hold no data
            elif path.is_file():
                seen[str(path)] = hashlib.sha256(path.read_bytes()).hexdigest()
    return seen


@pytest.fixture(scope="module")
def finished_run(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """One finished scripted run, copied into each case's scratch dir."""
    from runner_fakes import _targets

    base = tmp_path_factory.mktemp("template") / "run"
    with pytest.MonkeyPatch.context() as patch:
        for registry, name, entry in _targets():
            patch.setitem(registry, name, entry)
        patch.setenv("RAPPORT_HOME", str(base.parent / "home"))
        assert main([*RUN, str(base)]) == 0
    (base / "report.html").unlink(missing_ok=True)
    yield base


@pytest.mark.parametrize(
    ("argv", "setup", "needle"), [c[1:] for c in CASES], ids=[c[0] for c in CASES]
)
def test_bad_input_is_one_line_exit_2_and_changes_nothing(
    tmp_path: Path,
    finished_run: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    argv: list[str],
    setup: Callable[[Path], None] | None,
    needle: str,
) -> None:
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    run = scratch / "run"
    shutil.copytree(finished_run, run)
    if setup is not None:
        setup(scratch)
    home = Path(os.environ["RAPPORT_HOME"])
    before = _fingerprint(scratch, home)
    monkeypatch.chdir(run)
    capsys.readouterr()
    try:
        code = main([a.format(tmp=scratch, run=run) for a in argv])
    except SystemExit as exc:  # argparse
        code = exc.code if isinstance(exc.code, int) else 2
    out = capsys.readouterr()
    lines = out.err.strip().splitlines()
    assert code == 2, out.err
    assert len(lines) == 1 and lines[0].startswith("rapport: "), out.err
    assert needle.lower() in lines[0].lower(), lines[0]
    assert "Traceback" not in out.out + out.err
    assert _fingerprint(scratch, home) == before


def test_the_table_holds_the_reported_cases() -> None:
    assert len(CASES) >= 79
