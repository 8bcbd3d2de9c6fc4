"""`/docs`: the OpenAPI schema as one self-contained page (no script, nothing fetched)."""

from __future__ import annotations

import html
import json
from typing import Any

_STYLE = (
    "body{font:15px/1.5 system-ui,sans-serif;max-width:60rem;margin:2rem auto;padding:0 1rem}"
    "code,pre{font:13px ui-monospace,monospace}pre{background:#f5f5f5;padding:.75rem;"
    "overflow:auto}h2{margin-top:2rem;border-top:1px solid #ddd;padding-top:1rem}"
)


def docs_page(schema: dict[str, Any]) -> str:
    """Every operation of the schema with its summary, then the schema itself."""
    esc = html.escape
    parts = [
        f"<!doctype html><meta charset=utf-8><title>{esc(schema['info']['title'])}</title>",
        f"<style>{_STYLE}</style><h1>{esc(schema['info']['title'])}</h1>",
        "<p>Every route but <code>/healthz</code> needs <code>Authorization: Bearer KEY</code>. "
        "The schema is also at <a href=/openapi.json><code>/openapi.json</code></a>.</p>",
    ]
    for path, operations in schema.get("paths", {}).items():
        for method, op in operations.items():
            summary = op.get("description") or op.get("summary") or ""
            parts.append(f"<h2><code>{esc(method.upper())} {esc(path)}</code></h2>")
            parts.append(f"<p>{esc(summary)}</p>")
    parts.append(f"<h2>Schema</h2><pre>{esc(json.dumps(schema, indent=2))}</pre>")
    return "".join(parts)
