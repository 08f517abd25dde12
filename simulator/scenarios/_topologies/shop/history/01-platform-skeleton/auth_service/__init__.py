"""auth-service: password login, bearer tokens, and the token check behind every gateway request."""

from auth_service.handlers import AuthApp, InMemoryCredentials, InMemoryRevocations

__all__ = ["AuthApp", "InMemoryCredentials", "InMemoryRevocations"]
