"""Bridges that let other ecosystems play a seat: OpenEnv's protocol and MCP (extras).

`pip install 'metasre[openenv]'` or `'metasre[mcp]'` brings what they need (Starlette and
uvicorn); `metasre bridge openenv` and `metasre mcp` serve them in front of a running server.
They are built on the project's own client (`metasre.agents.client`), so a seat played through
a bridge keeps every rule of the gRPC protocol.
"""

from .app import API_VERSION, build_app
from .hub import BridgeError, Hub, Limits
from .seat import BridgeSeat, Step

__all__ = ["API_VERSION", "BridgeError", "BridgeSeat", "Hub", "Limits", "Step", "build_app"]
