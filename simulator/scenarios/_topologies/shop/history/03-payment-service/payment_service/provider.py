"""The card provider: capture and refund charges.

Production talks to the provider's HTTP API; tests and local dev use the deterministic
:class:`SandboxProvider`, whose card tokens decide the outcome.
"""

from __future__ import annotations

import json
import urllib.request
from dataclasses import dataclass
from typing import Protocol

from payment_service import config


@dataclass(frozen=True)
class Capture:
    """The provider's answer to a charge."""

    approved: bool
    reference: str = ""
    decline_code: str = ""


class CardProvider(Protocol):
    def capture(self, amount_cents: int, currency: str, source: str) -> Capture: ...

    def refund(self, reference: str, amount_cents: int) -> bool: ...


class SandboxProvider:
    """Approves every card token except ``tok_declined`` and ``tok_insufficient_funds``."""

    DECLINES = {"tok_declined": "card_declined", "tok_insufficient_funds": "insufficient_funds"}

    def __init__(self) -> None:
        self.captures: list[tuple[int, str, str]] = []
        self.refunds: list[tuple[str, int]] = []

    def capture(self, amount_cents: int, currency: str, source: str) -> Capture:
        if source in self.DECLINES:
            return Capture(False, decline_code=self.DECLINES[source])
        self.captures.append((amount_cents, currency, source))
        return Capture(True, reference=f"ch_{len(self.captures):06d}")

    def refund(self, reference: str, amount_cents: int) -> bool:
        self.refunds.append((reference, amount_cents))
        return True


class HttpCardProvider:
    """The provider's REST API."""

    def __init__(self, base_url: str = config.PROVIDER_URL,
                 timeout_s: float = config.PROVIDER_TIMEOUT_S) -> None:
        self._base = base_url.rstrip("/")
        self._timeout = timeout_s

    def capture(self, amount_cents: int, currency: str, source: str) -> Capture:
        answer = self._post("/charges", {"amount": amount_cents, "currency": currency,
                                         "source": source, "capture": True})
        if answer.get("status") != "succeeded":
            return Capture(False, decline_code=str(answer.get("decline_code", "unknown")))
        return Capture(True, reference=str(answer["id"]))

    def refund(self, reference: str, amount_cents: int) -> bool:
        answer = self._post("/refunds", {"charge": reference, "amount": amount_cents})
        return answer.get("status") == "succeeded"

    def _post(self, path: str, payload: dict) -> dict:
        request = urllib.request.Request(self._base + path, data=json.dumps(payload).encode(),
                                         headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(request, timeout=self._timeout) as response:
            return json.loads(response.read())
