"""The shop's deployment manifests, as its families' generators quote and patch them.

The shop families (checkout-crash-loop, payment-bad-deploy, user-service-oom) release a service
by patching the lines of its manifest that name the version; this is the one place that knows
how those lines read.
"""

from __future__ import annotations

REGISTRY = "registry.shop.internal"
"""Where the shop's images are pushed."""


def image(service: str, version: str | None) -> str:
    """The image reference of `service` at `version`."""
    return f"{REGISTRY}/{service}:{version}"


def manifest(service: str, version: str | None) -> str:
    """The lines of `service`'s deployment manifest that name its release `version`."""
    return f"version: {version}\nimage: {image(service, version)}"


def release_fields(service: str, tip: str, good: str | None, bad: str) -> dict[str, str]:
    """A fault table's manifest lines: at the topology's tip, on the good and the bad release.

    The good release's history commit patches `deploy_find` into `deploy_good`, the bad
    release's `deploy_good` into `deploy_bad`.
    """
    return {
        "deploy_find": manifest(service, tip),
        "deploy_good": manifest(service, good),
        "deploy_bad": manifest(service, bad),
    }
