"""Wall time and peak memory of `rapport demo` on the embedded model, from an empty response
cache (the models are shared, the cache and run dir are fresh). Prints one JSON object.

Run it alone (one llama.cpp process at a time):  python benchmarks/demo_run.py
Targets: under 10 minutes wall on 2 cores once installed; peak RSS under 4 GB.
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from rapport import rapport_home


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp) / "home"
        home.mkdir()
        (home / "models").symlink_to(rapport_home() / "models")
        env = {**os.environ, "RAPPORT_HOME": str(home)}
        command = [sys.executable, "-m", "rapport", "demo", "--no-progress"]
        command += ["--run-dir", str(Path(tmp) / "run")]
        started = time.perf_counter()
        done = subprocess.run(command, env=env, capture_output=True, text=True, check=False)
        wall = time.perf_counter() - started
    peak_kb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    print(
        json.dumps(
            {
                "command": "rapport demo",
                "exit_code": done.returncode,
                "wall_s": round(wall, 1),
                "peak_rss_mb": round(peak_kb / 1024),
                "target_wall_s": 600,
                "target_peak_rss_mb": 4096,
                "table": done.stdout.strip().splitlines()[-8:],
            },
            indent=2,
        )
    )


if __name__ == "__main__":
    main()
