"""notification-service: renders customer e-mails from templates and queues them for sending."""

from notification_service.handlers import InMemoryOutbox, NotificationApp

__all__ = ["InMemoryOutbox", "NotificationApp"]
