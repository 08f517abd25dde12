"""Plays a seat through the bridge's MCP server with the official `mcp` 2.x client.

Run by tests/bridges/test_mcp_clients.py in a separate environment (`.ci/run` makes it): `mcp`
2.x cannot be installed beside `openenv` 0.10, whose fastmcp 3 needs `mcp` < 2.

    python mcp2_client.py URL TOKEN PLAN_JSON

PLAN_JSON is a list of [tool, arguments]. Prints one JSON line per event: the server's
instructions, the tools listed, each call's result.
"""

import asyncio
import json
import sys

import httpx2
import mcp
from mcp.client.streamable_http import streamable_http_client


async def main(url: str, token: str, plan: list[list[object]]) -> None:
    headers = {"Authorization": f"Bearer {token}"}
    async with httpx2.AsyncClient(headers=headers, timeout=30) as http:
        transport = streamable_http_client(url, http_client=http)
        async with mcp.Client(transport) as client:
            print(
                json.dumps(
                    {
                        "protocol_version": client.protocol_version,
                        "instructions": client.instructions,
                    }
                )
            )
            listed = await client.list_tools()
            print(json.dumps({"tools": sorted(t.name for t in listed.tools)}))
            for tool, arguments in plan:
                result = await client.call_tool(str(tool), dict(arguments))  # type: ignore[arg-type]
                print(
                    json.dumps(
                        {
                            "tool": tool,
                            "is_error": result.is_error,
                            "text": [c.text for c in result.content if c.type == "text"],
                            "structured": result.structured_content,
                        }
                    ),
                    flush=True,
                )


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2], json.loads(sys.argv[3])))
