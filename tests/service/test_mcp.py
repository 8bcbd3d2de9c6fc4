"""The MCP tools: context, learn and forget, called as an assistant calls them."""

from __future__ import annotations

import json
from typing import Any

import pytest

from rapport.service import MemoryHub
from rapport.service._mcp import mcp_server

pytest.importorskip("mcp")


def _result(reply: Any) -> dict[str, Any]:
    blocks = reply[0] if isinstance(reply, tuple) else reply
    text = blocks.content[0].text if hasattr(blocks, "content") else blocks[0].text
    return dict(json.loads(text))


async def test_an_assistant_learns_recalls_and_forgets_through_mcp(hub: MemoryHub) -> None:
    server = mcp_server(hub, tenant="acme")
    names = {tool.name for tool in await server.list_tools()}
    assert names == {"context", "learn", "forget"}
    said = [{"role": "user", "content": "I always want answers as numbered steps."}]
    learned = _result(await server.call_tool("learn", {"user": "ada", "messages": said}))
    assert (learned["status"], learned["version"]) == ("done", 1)
    asked = [{"role": "user", "content": "numbered steps for baking bread?"}]
    found = _result(await server.call_tool("context", {"user": "ada", "messages": asked}))
    assert "numbered steps" in found["recall"]
    gone = _result(await server.call_tool("forget", {"user": "ada"}))
    assert gone["deleted_rows"] > 0 and hub.store.holds("acme", "ada") == 0


async def test_serve_memory_mcp_answers_over_stdio(tmp_path: Any) -> None:
    import os
    import sys

    from mcp import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    params = StdioServerParameters(
        command=sys.executable,
        args=[
            "-m",
            "rapport",
            "serve-memory",
            "--db",
            str(tmp_path / "m.sqlite"),
            "--memory",
            "rag",
            "--memory-option",
            "backend=bm25",
            "--mcp",
            "acme",
        ],
        env=dict(os.environ),  # the test's private RAPPORT_HOME, and its import path
    )
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        tools = await session.list_tools()
        assert {tool.name for tool in tools.tools} == {"context", "learn", "forget"}
        said = [{"role": "user", "content": "Tables, not prose."}]
        reply = await session.call_tool("learn", {"user": "ada", "messages": said})
        assert json.loads(reply.content[0].text)["version"] == 1
