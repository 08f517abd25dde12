"""notification-service HTTP handlers: accept a notification, render it, queue it.

Sending is asynchronous: the API answers 202 as soon as the message is in the outbox, and the
sender workers deliver it through the mail relay.
"""

from __future__ import annotations

import logging
from typing import Protocol

from notification_service.templates import TEMPLATES
from shop_common import Request, Response, ServiceApp, error_response, json_response

log = logging.getLogger("notification-service")


class Outbox(Protocol):
    """The queue of rendered messages (a redis list in production)."""

    def push(self, message: dict) -> int:
        """Queue a message; return the queue's length after the push."""


class InMemoryOutbox:
    """An Outbox in a list: local dev and tests."""

    def __init__(self) -> None:
        self.messages: list[dict] = []

    def push(self, message: dict) -> int:
        self.messages.append(message)
        return len(self.messages)


class NotificationApp(ServiceApp):
    """The notification-service app."""

    service = "notification-service"

    def __init__(self, outbox: Outbox) -> None:
        super().__init__()
        self._outbox = outbox
        self._sequence = 0
        self.router.add("POST", "/v1/notifications", self.create)

    def create(self, request: Request) -> Response:
        template = request.body.get("template")
        to = request.body.get("to")
        params = request.body.get("params") or {}
        if template not in TEMPLATES:
            return error_response(422, "unknown_template", f"no template {template!r}")
        if not to or "@" not in str(to):
            return error_response(422, "invalid_recipient", "to must be an e-mail address")
        subject, body = TEMPLATES[template]
        try:
            rendered = {"subject": subject.format(**params), "body": body.format(**params)}
        except KeyError as exc:
            return error_response(422, "missing_param", f"template {template} needs {exc}")
        self._sequence += 1
        notification_id = f"ntf-{self._sequence:06d}"
        depth = self._outbox.push({"id": notification_id, "to": to, **rendered})
        log.debug("queued %s (%s), outbox depth %d", notification_id, template, depth)
        return json_response(202, notification_id=notification_id, queued=True)
