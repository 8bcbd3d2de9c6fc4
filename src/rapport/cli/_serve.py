"""``rapport serve-model [--model SPEC] [--port N]``: an OpenAI-compatible local server."""

from __future__ import annotations

import argparse
import signal
import time

from rapport.llm import DEFAULT_SPEC, ModelError, serve_model

from ._config import port_number, whole_number
from ._errors import UsageError

_N_CTX = 256, 1_048_576
"""The context sizes a role's ``n_ctx`` setting allows (rapport.log.ProviderSettings)."""


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``serve-model`` command."""
    parser = subparsers.add_parser(
        "serve-model",
        help="serve an embedded model over an OpenAI-compatible API on 127.0.0.1",
        description="Start llama-cpp-python's OpenAI-compatible server for a llamacpp/... "
        "model, bound to 127.0.0.1 only, until interrupted. Point any OpenAI client at the "
        "printed base URL (e.g. --model all=openai/NAME with OPENAI_BASE_URL set). "
        "scripted/auto serves the test double instead (no weights, no llama.cpp): a "
        "stand-in server for trying the OpenAI path.",
    )
    parser.add_argument(
        "--model", default=DEFAULT_SPEC, metavar="SPEC", help="llamacpp/... or scripted/... spec"
    )
    parser.add_argument("--port", type=port_number, default=8080, help="port (0 picks a free one)")
    parser.add_argument(
        "--n-ctx",
        type=whole_number("--n-ctx", *_N_CTX),
        default=8192,
        help=f"context size in tokens ({_N_CTX[0]} to {_N_CTX[1]})",
    )
    parser.set_defaults(handler=handle)


def _interrupt(_signum: int, _frame: object) -> None:
    raise KeyboardInterrupt


def handle(args: argparse.Namespace) -> int:
    """Run the command."""
    base, mark, _ = args.model.partition("?")
    if mark:
        raise UsageError(
            f"--model takes a spec without options, got '{args.model}' "
            f"(the context size is --n-ctx: --model {base} --n-ctx N)"
        )
    try:
        with serve_model(args.model, args.port, n_ctx=args.n_ctx) as served:
            print(f"serving {args.model} at {served.base_url} (model name '{served.model}')")
            print(f"  OPENAI_BASE_URL={served.base_url} rapport run ... --model all={served.spec}")
            print("  press Ctrl-C to stop", flush=True)
            signal.signal(signal.SIGTERM, _interrupt)  # stop the server on `kill` too
            while served.alive():
                time.sleep(1)
            raise UsageError("the model server exited unexpectedly")
    except ModelError as exc:
        raise UsageError(str(exc)) from exc
    except KeyboardInterrupt:
        print("stopped")
        return 0
