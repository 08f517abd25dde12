"""A seat's view as the SDK gives it, and whether it may make a call: the server's rule.

Pure: the scripted policies judge their calls with it, and load no gRPC.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

FULL_VIEW: Mapping[str, Any] = {"services": None, "code": True, "data": True, "deploys": True}
"""The full view, as `view_of` gives it."""


def may_call(
    view: Mapping[str, Any], tool: Mapping[str, Any], args: Mapping[str, Any] | None = None
) -> bool:
    """Whether a seat of `view` (as `view_of` gives it) may make this call of `tool`.

    `tool` is a ListTools entry: the server serves the traits it judges a view by (the systems
    a tool needs, the arguments that name a service, whether it gives hints), so this is the
    server's rule, not a copy of it. A queue or flag is judged by the service that owns it,
    which the server knows and the client does not: such a call may still be refused
    (OUTSIDE_VIEW).
    """
    services = view.get("services")
    if services is None and all(view.get(s, True) for s in ("code", "data", "deploys")):
        return True
    if any(not view.get(system, True) for system in tool.get("needs", ())):
        return False
    if tool.get("gives_hints", False):
        return False
    named = (args or {}).get("service") if "service" in tool.get("service_args", ()) else None
    return services is None or named is None or str(named) in services


__all__ = ["FULL_VIEW", "may_call"]
