"""``rapport serve-memory``: a memory method behind an HTTP API and an OpenAI-compatible proxy."""

from __future__ import annotations

import argparse
import os
import secrets
from pathlib import Path

from pydantic import ValidationError

from rapport.memory import UnknownMemoryError
from rapport.service import MemoryHub, ServiceSettings, Upstream, create_app
from rapport.store import StoreError

from ._config import parse_models, port_number, whole_number
from ._errors import UsageError


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``serve-memory`` command."""
    parser = subparsers.add_parser(
        "serve-memory",
        help="serve a memory method over HTTP (tenants, durable learning, a chat proxy)",
        description="Serve one memory method to apps: per-user context, learning from "
        "finished conversations (a durable job queue), versions, export and forget, for "
        "tenants with their own API keys; with --upstream, an OpenAI-compatible "
        "/v1/chat/completions that puts each user's memory into the request. Binds "
        "127.0.0.1 unless --host says otherwise. `--add-tenant NAME` creates a tenant, "
        "prints a new API key for it and exits (only the key's digest is stored).",
    )
    parser.add_argument("--db", required=True, metavar="FILE", help="the SQLite database")
    parser.add_argument("--memory", default="reflection", metavar="METHOD", help="memory method")
    parser.add_argument(
        "--memory-option",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="an option of the memory method (repeatable; values are YAML scalars)",
    )
    parser.add_argument(
        "--model",
        action="append",
        default=[],
        metavar="ROLE=SPEC",
        help="model for a role (the method asks for 'memory'; all=SPEC sets every role)",
    )
    parser.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1)")
    parser.add_argument("--port", type=port_number, default=8765, help="port (0 picks a free one)")
    parser.add_argument("--upstream", metavar="URL", help="OpenAI-compatible base URL to proxy to")
    parser.add_argument(
        "--upstream-key-env",
        default="OPENAI_API_KEY",
        metavar="VAR",
        help="environment variable holding the upstream's API key",
    )
    parser.add_argument(
        "--idle-end",
        type=whole_number("--idle-end", 0, 604_800),
        default=1800,
        metavar="S",
        help="end and learn a proxied conversation idle this many seconds (0: never)",
    )
    parser.add_argument(
        "--rate",
        type=whole_number("--rate", 0, 1_000_000),
        default=600,
        metavar="N",
        help="requests per minute per tenant (0: no limit)",
    )
    parser.add_argument(
        "--seed",
        type=whole_number("--seed", 0, 2**63 - 1),
        default=0,
        metavar="N",
        help="seed the memory's model calls derive their sampling seeds from (a run's --seed "
        "gives the same calls)",
    )
    parser.add_argument("--add-tenant", metavar="NAME", help="create a tenant, print a key, exit")
    parser.add_argument(
        "--mcp",
        metavar="TENANT",
        help="serve the memory as MCP tools (context, learn, forget) over stdio for one "
        "tenant, instead of HTTP",
    )
    parser.add_argument(
        "--demo",
        nargs="?",
        const="llamacpp/qwen2.5-coder-0.5b",
        metavar="SPEC",
        help="serve a model (default the small embedded one) and the service on it, play two "
        "conversations through the chat proxy with the openai SDK, print them, exit",
    )
    parser.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    """Run the command."""
    if args.add_tenant is not None:
        return add_tenant(Path(args.db), args.add_tenant)
    if args.demo is not None:
        return demo(Path(args.db), args.demo, args.memory)
    hub = _hub(args)
    if args.mcp is not None:
        from rapport.service._mcp import mcp_server

        mcp_server(hub, tenant=args.mcp).run("stdio")
        return 0
    upstream = None
    if args.upstream:
        upstream = Upstream(args.upstream, os.environ.get(args.upstream_key_env, ""))
    settings = ServiceSettings(rate_per_min=args.rate, idle_end_s=float(args.idle_end))
    app = create_app(hub, settings, upstream)
    from rapport.service._serve import bind, server

    try:
        sock = bind(args.host, args.port)
    except OSError as exc:
        raise UsageError(f"cannot listen on {args.host}:{args.port}: {exc.strerror}") from exc
    host, port = sock.getsockname()[:2]
    print(f"serving memory '{args.memory}' at http://{host}:{port} (API at /docs)", flush=True)
    server(app).run(sockets=[sock])
    return 0


def demo(db: Path, model: str, method: str) -> int:
    """Serve a model and the service on it; play the builder's two conversations."""
    from rapport.llm import ModelError
    from rapport.service._demo import demo_service, two_conversations

    try:
        with demo_service(model, db, method) as (url, key):
            print(f"memory service ({method}) at {url}, model {model}", flush=True)
            for turn in two_conversations(url, key):
                print(f"\n[conversation {turn.conversation}] user: {turn.asked}")
                print(f"[conversation {turn.conversation}] assistant: {turn.answered}")
            notes = "\n".join(f"- {item['text']}" for item in _items(db))
            print(f"\nwhat the memory keeps of the user:\n{notes}")
    except ModelError as exc:
        raise UsageError(str(exc)) from exc
    return 0


def _items(db: Path) -> list[dict[str, object]]:
    from rapport.store import ServiceStore

    return [i.model_dump() for i in ServiceStore(db).memory("demo", "ada").state.items]


def add_tenant(db: Path, name: str) -> int:
    """Create a tenant and print a new key for it."""
    if not name.isidentifier() and not name.replace("-", "_").isidentifier():
        raise UsageError(f"--add-tenant: '{name}' is not a name (letters, digits, '_', '-')")
    from rapport.store import ServiceStore

    key = "rk-" + secrets.token_urlsafe(32)
    try:
        store = ServiceStore(db)
        store.add_tenant(name)
        store.add_key(name, key)
    except StoreError as exc:
        raise UsageError(str(exc)) from exc
    print(key)
    return 0


def _hub(args: argparse.Namespace) -> MemoryHub:
    import yaml

    options = {}
    for pair in args.memory_option:
        key, eq, value = pair.partition("=")
        if not eq or not key:
            raise UsageError(f"--memory-option takes KEY=VALUE, got '{pair}'")
        options[key] = yaml.safe_load(value)
    try:
        return MemoryHub.open(
            args.memory, args.db, models=parse_models(args.model), options=options
        )
    except (UnknownMemoryError, StoreError) as exc:
        raise UsageError(str(exc)) from exc
    except ValidationError as exc:
        first = exc.errors()[0]
        raise UsageError(f"--memory-option {first['loc'][0]}: {first['msg']}") from exc
