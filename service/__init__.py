"""The gRPC service: sessions of one or more agents around one simulated incident.

server = await build_server(ServerConfig(port=0))
await server.start()
"""

from metasre.service.config import Limits, ServerConfig
from metasre.service.server import MetasreServer, build_server, serve
from metasre.service.version import PROTOCOL_VERSION, SERVER_VERSION

__all__ = [
    "PROTOCOL_VERSION",
    "SERVER_VERSION",
    "Limits",
    "MetasreServer",
    "ServerConfig",
    "build_server",
    "serve",
]
