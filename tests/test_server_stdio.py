"""`ask-engine mcp-stdio`: a desktop MCP host's round trip, spawning the real CLI with the SDK's stdio client."""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path
from typing import Any

from ask_engine.models import schema_errors
from tests.server_helpers import text_json

ROOT = Path(__file__).resolve().parents[1]


def test_stdio_round_trip_lists_and_answers(sample_index: Path) -> None:
    from mcp import Client, StdioServerParameters

    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "ask_engine.cli", "mcp-stdio", "--index", str(sample_index)],
        cwd=str(ROOT),
        env={**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"},
    )

    async def session() -> tuple[Any, Any, Any]:
        async with Client(params, read_timeout_seconds=180) as client:
            tools = await client.list_tools()
            first = await client.call_tool("ask_business", {"query": "Is the Tarn Wellington Boot waterproof?"})
            follow = {
                "query": "and how much is it?",
                "conversation": {"id": first.structured_content["conversation"]["id"]},
            }
            second = await client.call_tool("ask_business", follow)
            return tools, first, second

    tools, first, second = asyncio.run(session())
    assert [t.name for t in tools.tools] == ["ask_business"]
    assert "query" in tools.tools[0].input_schema["properties"]
    for result in (first, second):
        assert result.is_error is False
        assert schema_errors("ask_response", result.structured_content) == []
        assert text_json(result) == result.structured_content
    # the local client owns its conversation: the follow-up continues it
    assert second.structured_content["conversation"]["id"] == first.structured_content["conversation"]["id"]
    assert "59" in second.structured_content["answer"]["plain"]
