"""api-gateway: the public edge. Authenticates requests and routes them to upstream services."""

from api_gateway.router import Gateway

__all__ = ["Gateway"]
