"""Unit tests of notification-service: rendering and queueing."""

from notification_service import InMemoryOutbox, NotificationApp
from shop_common import Request


def test_renders_and_queues():
    outbox = InMemoryOutbox()
    answer = NotificationApp(outbox).handle(Request("POST", "/v1/notifications", {
        "template": "order_confirmation", "to": "ana@example.com",
        "params": {"order_id": "ord-000001", "item_count": 2}}))
    assert answer.status == 202, answer
    assert outbox.messages[0]["subject"] == "Your order ord-000001 is confirmed", outbox.messages


def test_unknown_template_is_422():
    answer = NotificationApp(InMemoryOutbox()).handle(Request("POST", "/v1/notifications", {
        "template": "nope", "to": "ana@example.com"}))
    assert answer.status == 422, answer


def test_missing_param_is_422():
    answer = NotificationApp(InMemoryOutbox()).handle(Request("POST", "/v1/notifications", {
        "template": "order_confirmation", "to": "ana@example.com", "params": {}}))
    assert answer.status == 422 and answer.body["error"]["code"] == "missing_param", answer
