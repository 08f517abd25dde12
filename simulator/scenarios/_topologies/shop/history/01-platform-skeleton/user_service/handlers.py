"""user-service HTTP handlers: read and update a customer's own profile.

A user may only read or change their own profile: the gateway puts the verified user id in
``X-User-Id``. Changing the e-mail address logs the user out everywhere (auth-service revoke).
"""

from __future__ import annotations

import logging
from typing import Protocol

from shop_common import (
    Request,
    Response,
    ServiceApp,
    Transport,
    UpstreamError,
    error_response,
    json_response,
)
from user_service import config
from user_service.cache import ProfileCache

log = logging.getLogger("user-service")

EDITABLE_FIELDS = ("display_name", "email", "locale")


class UserStore(Protocol):
    """Profiles by user id (the ``users`` table in production)."""

    def load(self, user_id: str) -> dict | None: ...

    def save(self, user_id: str, profile: dict) -> None: ...


class InMemoryUserStore:
    """A UserStore in a dict: local dev and tests."""

    def __init__(self, rows: dict[str, dict] | None = None) -> None:
        self._rows = {k: dict(v) for k, v in (rows or {}).items()}

    def load(self, user_id: str) -> dict | None:
        row = self._rows.get(user_id)
        return dict(row) if row is not None else None

    def save(self, user_id: str, profile: dict) -> None:
        self._rows[user_id] = dict(profile)


class UserApp(ServiceApp):
    """The user-service app."""

    service = "user-service"

    def __init__(self, store: UserStore, transport: Transport,
                 cache: ProfileCache | None = None) -> None:
        super().__init__()
        self._store = store
        self._transport = transport
        self._cache = cache if cache is not None else ProfileCache()
        self.router.add("GET", "/v1/users/{user_id}", self.get_profile)
        self.router.add("PATCH", "/v1/users/{user_id}", self.update_profile)

    def get_profile(self, request: Request) -> Response:
        user_id = request.params["user_id"]
        if request.header("X-User-Id") != user_id:
            return error_response(403, "forbidden", "you can only read your own profile")
        profile = self._cache.get(user_id)
        if profile is None:
            profile = self._store.load(user_id)
            if profile is None:
                return error_response(404, "not_found", f"no user {user_id}")
            self._cache.put(user_id, profile)
        return json_response(200, user_id=user_id, **profile)

    def update_profile(self, request: Request) -> Response:
        user_id = request.params["user_id"]
        if request.header("X-User-Id") != user_id:
            return error_response(403, "forbidden", "you can only change your own profile")
        unknown = sorted(set(request.body) - set(EDITABLE_FIELDS))
        if unknown:
            return error_response(422, "invalid_request", f"fields not editable: {unknown}")
        profile = self._store.load(user_id)
        if profile is None:
            return error_response(404, "not_found", f"no user {user_id}")
        email_changed = "email" in request.body and request.body["email"] != profile.get("email")
        profile.update(request.body)
        self._store.save(user_id, profile)
        self._cache.invalidate(user_id)
        if email_changed:
            self._revoke_sessions(user_id)
        return json_response(200, user_id=user_id, **profile)

    def _revoke_sessions(self, user_id: str) -> None:
        """Log the user out everywhere after an e-mail change; failures are logged, not fatal."""
        revoke = Request("POST", "/v1/auth/revoke", body={"user_id": user_id})
        try:
            answer = self._transport.send(config.AUTH_SERVICE, revoke, timeout_s=config.AUTH_TIMEOUT_S)
        except UpstreamError as exc:
            log.warning("could not revoke sessions of %s: %s", user_id, exc)
            return
        if not answer.ok:
            log.warning("auth-service refused to revoke sessions of %s: %d", user_id, answer.status)
