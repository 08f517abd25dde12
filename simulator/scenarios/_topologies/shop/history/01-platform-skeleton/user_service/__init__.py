"""user-service: customer profiles (name, email, locale) on postgres-db, with a per-pod cache."""

from user_service.cache import ProfileCache
from user_service.handlers import InMemoryUserStore, UserApp

__all__ = ["InMemoryUserStore", "ProfileCache", "UserApp"]
