"""Writes tls-cert-expiry's generated tables: the `[[variants.fault]]` axis and the certificates.

The platform's certificates are declared once each (INVENTORY), and each fault table is one
structure: the certificate that expired, the service that owns it, and how that shows. A serving
certificate (ingress, server, transport, broker, public-edge) is refused by the owner's callers,
which page and name it; a client certificate is refused by the dependency it is shown to (which
logs that at INFO only) so its owner pages; an expired CA bundle makes its owner refuse every
dependency it calls. A certificate's expiry cannot be a per-seed override of a declared
certificate (declarations are not merged), so every fault table carries every certificate's
expiry in `expires` (the bad one negative, the others 20-85 days out, fixed per structure) and each
declaration reads its own key. Run after changing a row:

    python -m tools.families regenerate tls_cert_expiry
"""

# ruff: noqa: E501  # the rows hold whole log lines; split, they no longer read as logs

from __future__ import annotations

import random

from ..authoring import SCENARIOS, fault_axis, toml_value

HERE = SCENARIOS / "tls_cert_expiry"


def H(service: str) -> str:
    """A service's internal hostname."""
    return f"{service}.relay.internal"


# (owner, certificate name, hostnames)
INVENTORY = [
    ("edge-proxy", "public-edge", ["relay.example", "*.relay.example"]),
    ("edge-proxy", "mtls-ca", ["relay-internal-ca"]),
    ("api-gateway", "ingress", [H("api-gateway")]),
    ("api-gateway", "client-to-upstreams", ["api-gateway.clients.relay.internal"]),
    ("auth-service", "ingress", [H("auth-service")]),
    ("sso-bridge", "ingress", [H("sso-bridge")]),
    ("session-store", "ingress", [H("session-store")]),
    ("accounts-api", "ingress", [H("accounts-api")]),
    ("accounts-api", "mtls-ca", ["relay-internal-ca"]),
    ("accounts-db", "server", [H("accounts-db")]),
    ("catalog-api", "ingress", [H("catalog-api")]),
    ("catalog-api", "client-to-pricing", ["catalog-api.clients.relay.internal"]),
    ("pricing-service", "ingress", [H("pricing-service")]),
    ("search-api", "ingress", [H("search-api")]),
    ("search-api", "client-to-search-index", ["search-api.clients.relay.internal"]),
    ("search-index", "transport", [H("search-index"), "*.search-index.relay.internal"]),
    ("media-api", "ingress", [H("media-api")]),
    ("media-api", "client-to-url-signer", ["media-api.clients.relay.internal"]),
    ("url-signer", "ingress", [H("url-signer")]),
    ("transcoder", "client-to-object-store", ["transcoder.clients.relay.internal"]),
    ("object-store", "server", [H("object-store"), "*.object-store.relay.internal"]),
    ("media-cdn", "origin-client", ["media-cdn.clients.relay.internal"]),
    ("checkout-api", "ingress", [H("checkout-api")]),
    ("checkout-api", "client-to-payments", ["checkout-api.clients.relay.internal"]),
    ("checkout-api", "mtls-ca", ["relay-internal-ca"]),
    ("inventory-service", "ingress", [H("inventory-service")]),
    ("payments-service", "ingress", [H("payments-service")]),
    ("payments-service", "client-to-bank-gateway", ["payments-service.clients.relay.internal"]),
    ("payments-service", "mtls-ca", ["relay-internal-ca"]),
    ("bank-gateway", "client-to-acquirer", ["relay-merchant-4471.acquirer-mtls.example"]),
    ("ledger-service", "ingress", [H("ledger-service")]),
    ("notify-api", "ingress", [H("notify-api")]),
    ("webhook-dispatcher", "client-to-partners", ["webhooks.relay.example"]),
    ("event-bus", "broker", [H("event-bus"), "*.event-bus.relay.internal"]),
    ("scheduler", "client-to-event-bus", ["scheduler.clients.relay.internal"]),
]

# (owner, certificate, who pages, the pager's error lines (when a caller pages), the owner's
#  error lines, added error rates, difficulty)
ROWS = [
    # ingress-like: the root presents it; its callers see x509 errors and name it
    (
        "api-gateway",
        "ingress",
        "edge-proxy",
        [
            "upstream connect error to api-gateway.relay.internal:8443: x509: certificate has expired or is not yet valid; answering 503"
        ],
        [
            "http: TLS handshake error from 10.20.0.14:51432: remote error: tls: expired certificate (serving certificate ingress, api-gateway.relay.internal)"
        ],
        {"edge-proxy": {"error_rate": 0.62}},
        "easy",
    ),
    (
        "auth-service",
        "ingress",
        "catalog-api",
        [
            "JWKS refresh from auth-service.relay.internal failed: x509: certificate has expired or is not yet valid; verifying with stale keys, new tokens refused (401)"
        ],
        [
            "http: TLS handshake error from 10.20.3.7:40112: remote error: tls: expired certificate (serving certificate ingress, auth-service.relay.internal)"
        ],
        {"catalog-api": {"error_rate": 0.34}, "api-gateway": {"error_rate": 0.1}},
        "medium",
    ),
    (
        "catalog-api",
        "ingress",
        "api-gateway",
        [
            "upstream catalog-api.relay.internal:8443: x509: certificate has expired or is not yet valid; answering 503 on /v2/catalog"
        ],
        [
            "http: TLS handshake error from 10.20.0.9:38810: remote error: tls: expired certificate (serving certificate ingress, catalog-api.relay.internal)"
        ],
        {"api-gateway": {"error_rate": 0.27}, "edge-proxy": {"error_rate": 0.08}},
        "easy",
    ),
    (
        "pricing-service",
        "ingress",
        "checkout-api",
        [
            "POST https://pricing-service.relay.internal/v1/quotes: x509: certificate has expired or is not yet valid; checkout cannot price carts"
        ],
        [
            "http: TLS handshake error from 10.20.5.21:60114: remote error: tls: expired certificate (serving certificate ingress, pricing-service.relay.internal)"
        ],
        {
            "checkout-api": {"error_rate": 0.41, "business": -25},
            "catalog-api": {"error_rate": 0.12},
        },
        "easy",
    ),
    (
        "search-index",
        "transport",
        "search-api",
        [
            "search-index.relay.internal:9200 unreachable for queries: SSLHandshakeException: PKIX path validation failed: certificate expired on the node's transport certificate"
        ],
        [
            "[transport] SSL handshake failed from 10.20.4.3: certificate_expired alert sent by peer for transport certificate (search-index.relay.internal)"
        ],
        {"search-api": {"error_rate": 0.45}, "api-gateway": {"error_rate": 0.07}},
        "medium",
    ),
    (
        "url-signer",
        "ingress",
        "media-cdn",
        [
            "signing call to url-signer.relay.internal failed: x509: certificate has expired or is not yet valid; segments answered 503"
        ],
        [
            "http: TLS handshake error from 10.20.8.2:47750: remote error: tls: expired certificate (serving certificate ingress, url-signer.relay.internal)"
        ],
        {"media-cdn": {"error_rate": 0.38}, "edge-proxy": {"error_rate": 0.09}},
        "medium",
    ),
    (
        "object-store",
        "server",
        "transcoder",
        [
            "PUT https://object-store.relay.internal/renditions/...: x509: certificate has expired or is not yet valid; rendition upload failed"
        ],
        [
            "TLS handshake error from 10.20.9.14: remote error: tls: expired certificate (server certificate, object-store.relay.internal)"
        ],
        {"transcoder": {"error_rate": 0.52}, "media-api": {"error_rate": 0.11}},
        "medium",
    ),
    (
        "payments-service",
        "ingress",
        "checkout-api",
        [
            "POST https://payments-service.relay.internal/v1/captures: x509: certificate has expired or is not yet valid; order left unpaid"
        ],
        [
            "http: TLS handshake error from 10.20.5.30:55102: remote error: tls: expired certificate (serving certificate ingress, payments-service.relay.internal)"
        ],
        {
            "checkout-api": {"error_rate": 0.37, "business": -22},
            "api-gateway": {"error_rate": 0.08},
        },
        "easy",
    ),
    (
        "ledger-service",
        "ingress",
        "payments-service",
        [
            "journal post to ledger-service.relay.internal failed: x509: certificate has expired or is not yet valid; captures held in pending"
        ],
        [
            "http: TLS handshake error from 10.20.6.8:42210: remote error: tls: expired certificate (serving certificate ingress, ledger-service.relay.internal)"
        ],
        {"payments-service": {"error_rate": 0.29}, "checkout-api": {"error_rate": 0.12}},
        "medium",
    ),
    (
        "accounts-db",
        "server",
        "accounts-api",
        [
            "could not connect to accounts-db.relay.internal:5432: SSL error: certificate verify failed: certificate has expired"
        ],
        [
            "LOG:  could not accept SSL connection: sslv3 alert certificate expired (server certificate accounts-db.relay.internal)"
        ],
        {"accounts-api": {"error_rate": 0.58}, "api-gateway": {"error_rate": 0.09}},
        "hard",
    ),
    (
        "event-bus",
        "broker",
        "analytics-ingest",
        [
            "consumer group ingest: SSL handshake to event-bus.relay.internal:9093 failed: PKIX path validation failed: validity check failed (certificate expired); no partitions assigned"
        ],
        [
            "[SocketServer listenerType=ZK_BROKER] Failed authentication with /10.20.7.12 (SSL handshake failed: broker certificate expired, event-bus.relay.internal)"
        ],
        {"analytics-ingest": {"error_rate": 0.66, "queue_depth": 90}},
        "hard",
    ),
    (
        "session-store",
        "ingress",
        "auth-service",
        [
            "session lookup: TLS to session-store.relay.internal:6380 failed: x509: certificate has expired or is not yet valid; sign-ins failing"
        ],
        [
            "Error accepting a client connection: error:0A000415:SSL routines::sslv3 alert certificate expired (server certificate ingress, session-store.relay.internal)"
        ],
        {"auth-service": {"error_rate": 0.44}, "api-gateway": {"error_rate": 0.13}},
        "hard",
    ),
    (
        "inventory-service",
        "ingress",
        "checkout-api",
        [
            "POST https://inventory-service.relay.internal/v1/holds: x509: certificate has expired or is not yet valid; carts cannot hold stock"
        ],
        [
            "http: TLS handshake error from 10.20.5.33:39002: remote error: tls: expired certificate (serving certificate ingress, inventory-service.relay.internal)"
        ],
        {
            "checkout-api": {"error_rate": 0.33, "business": -19},
            "api-gateway": {"error_rate": 0.07},
        },
        "easy",
    ),
    (
        "notify-api",
        "ingress",
        "api-gateway",
        [
            "upstream notify-api.relay.internal:8443: x509: certificate has expired or is not yet valid; answering 503 on /v2/notifications"
        ],
        [
            "http: TLS handshake error from 10.20.0.11:58020: remote error: tls: expired certificate (serving certificate ingress, notify-api.relay.internal)"
        ],
        {"api-gateway": {"error_rate": 0.12}, "notify-api": {"error_rate": 0.0}},
        "easy",
    ),
    (
        "edge-proxy",
        "public-edge",
        "edge-proxy",
        [],
        [
            "TLS handshake error from 198.51.100.23:61022: remote error: tls: certificate expired (public-edge, *.relay.example)",
            "downstream TLS: 71% of client handshakes aborted by the client (certificate expired) in the last minute",
        ],
        {"edge-proxy": {"error_rate": 0.71}},
        "easy",
    ),
    # client certificates: the root presents it to a dependency, which refuses it (logged at INFO there)
    (
        "catalog-api",
        "client-to-pricing",
        "catalog-api",
        [],
        [
            "POST https://pricing-service.relay.internal/v1/quotes: remote error: tls: expired certificate (our client certificate client-to-pricing was refused)",
            "item pages without prices: 100% of quote calls fail the mTLS handshake",
        ],
        {"catalog-api": {"error_rate": 0.31}, "api-gateway": {"error_rate": 0.09}},
        "medium",
    ),
    (
        "search-api",
        "client-to-search-index",
        "search-api",
        [],
        [
            "search-index.relay.internal:9200 closed the handshake: remote error: tls: expired certificate (our client certificate client-to-search-index)"
        ],
        {"search-api": {"error_rate": 0.48}, "api-gateway": {"error_rate": 0.08}},
        "medium",
    ),
    (
        "media-api",
        "client-to-url-signer",
        "media-api",
        [],
        [
            "signing request to url-signer.relay.internal refused: remote error: tls: expired certificate (our client certificate client-to-url-signer)",
            "upload URLs cannot be issued: uploads failing",
        ],
        {"media-api": {"error_rate": 0.35}, "api-gateway": {"error_rate": 0.06}},
        "medium",
    ),
    (
        "checkout-api",
        "client-to-payments",
        "checkout-api",
        [],
        [
            "POST https://payments-service.relay.internal/v1/captures: remote error: tls: expired certificate (our client certificate client-to-payments was refused)"
        ],
        {"checkout-api": {"error_rate": 0.39, "business": -24}, "api-gateway": {"error_rate": 0.1}},
        "medium",
    ),
    (
        "payments-service",
        "client-to-bank-gateway",
        "payments-service",
        [],
        [
            "capture via bank-gateway.relay.internal refused: remote error: tls: expired certificate (our client certificate client-to-bank-gateway)"
        ],
        {
            "payments-service": {"error_rate": 0.42},
            "checkout-api": {"error_rate": 0.21, "business": -16},
        },
        "hard",
    ),
    (
        "bank-gateway",
        "client-to-acquirer",
        "payments-service",
        ["bank-gateway answered 502 on captures: acquirer unreachable over mTLS"],
        [
            "acquirer endpoint relay-merchant-4471.acquirer-mtls.example refused the handshake: remote error: tls: expired certificate (our client certificate client-to-acquirer)"
        ],
        {
            "payments-service": {"error_rate": 0.47},
            "checkout-api": {"error_rate": 0.25, "business": -20},
        },
        "hard",
    ),
    (
        "transcoder",
        "client-to-object-store",
        "transcoder",
        [],
        [
            "PUT https://object-store.relay.internal/renditions/...: remote error: tls: expired certificate (our client certificate client-to-object-store)"
        ],
        {"transcoder": {"error_rate": 0.55}, "media-api": {"error_rate": 0.1}},
        "medium",
    ),
    (
        "scheduler",
        "client-to-event-bus",
        "scheduler",
        [],
        [
            "producer: SSL handshake to event-bus.relay.internal:9093 failed: Received fatal alert: certificate_expired (our client certificate client-to-event-bus); 0 triggers published"
        ],
        {"scheduler": {"error_rate": 0.6}, "notify-api": {"error_rate": 0.09}},
        "hard",
    ),
    (
        "webhook-dispatcher",
        "client-to-partners",
        "webhook-dispatcher",
        [],
        [
            "partner endpoints refuse the handshake: remote error: tls: expired certificate (our client certificate client-to-partners, webhooks.relay.example)",
            "deliveries failing for all mTLS partners; retry queue growing",
        ],
        {"webhook-dispatcher": {"error_rate": 0.44, "queue_depth": 50}},
        "medium",
    ),
    (
        "media-cdn",
        "origin-client",
        "media-cdn",
        [],
        [
            "origin fetch from object-store.relay.internal refused: remote error: tls: expired certificate (our client certificate origin-client)",
            "cache misses cannot be filled: new titles answer 502",
        ],
        {"media-cdn": {"error_rate": 0.26}, "edge-proxy": {"error_rate": 0.07}},
        "medium",
    ),
    (
        "api-gateway",
        "client-to-upstreams",
        "api-gateway",
        [],
        [
            "mTLS to upstreams refused: remote error: tls: expired certificate (our client certificate client-to-upstreams) from catalog-api.relay.internal, search-api.relay.internal, checkout-api.relay.internal"
        ],
        {"api-gateway": {"error_rate": 0.74}, "edge-proxy": {"error_rate": 0.3}},
        "hard",
    ),
    # CA bundles: the root can no longer verify anyone it calls
    (
        "payments-service",
        "mtls-ca",
        "payments-service",
        [],
        [
            "x509: certificate signed by unknown authority verifying bank-gateway.relay.internal: the CA bundle mtls-ca (relay-internal-ca) in our trust store has expired"
        ],
        {
            "payments-service": {"error_rate": 0.51},
            "checkout-api": {"error_rate": 0.22, "business": -15},
        },
        "hard",
    ),
    (
        "checkout-api",
        "mtls-ca",
        "checkout-api",
        [],
        [
            "x509: certificate signed by unknown authority verifying payments-service.relay.internal: the CA bundle mtls-ca (relay-internal-ca) in our trust store has expired"
        ],
        {
            "checkout-api": {"error_rate": 0.57, "business": -30},
            "api-gateway": {"error_rate": 0.12},
        },
        "hard",
    ),
    (
        "edge-proxy",
        "mtls-ca",
        "edge-proxy",
        [],
        [
            "upstream api-gateway.relay.internal: x509: certificate signed by unknown authority (the CA bundle mtls-ca, relay-internal-ca, expired); answering 503"
        ],
        {"edge-proxy": {"error_rate": 0.68}},
        "hard",
    ),
    (
        "accounts-api",
        "mtls-ca",
        "accounts-api",
        [],
        [
            "x509: certificate signed by unknown authority verifying auth-service.relay.internal: the CA bundle mtls-ca (relay-internal-ca) in our trust store has expired"
        ],
        {"accounts-api": {"error_rate": 0.46}, "api-gateway": {"error_rate": 0.08}},
        "hard",
    ),
]

# Client certificates: the dependency that refuses it, and what it logs (at INFO).
PEERS = {
    ("catalog-api", "client-to-pricing"): (
        "pricing-service",
        "http: TLS handshake error from 10.20.3.7:51102: tls: client certificate expired (CN=catalog-api.clients.relay.internal)",
    ),
    ("search-api", "client-to-search-index"): (
        "search-index",
        "[transport] client certificate of search-api.clients.relay.internal rejected: certificate expired",
    ),
    ("media-api", "client-to-url-signer"): (
        "url-signer",
        "http: TLS handshake error from 10.20.8.5:33016: tls: client certificate expired (CN=media-api.clients.relay.internal)",
    ),
    ("checkout-api", "client-to-payments"): (
        "payments-service",
        "http: TLS handshake error from 10.20.5.4:44870: tls: client certificate expired (CN=checkout-api.clients.relay.internal)",
    ),
    ("payments-service", "client-to-bank-gateway"): (
        "bank-gateway",
        "http: TLS handshake error from 10.20.6.2:37011: tls: client certificate expired (CN=payments-service.clients.relay.internal)",
    ),
    ("transcoder", "client-to-object-store"): (
        "object-store",
        "TLS handshake error from 10.20.9.30: client certificate expired (CN=transcoder.clients.relay.internal)",
    ),
    ("scheduler", "client-to-event-bus"): (
        "event-bus",
        "Failed authentication with /10.20.7.40 (SSL handshake failed: client certificate expired, CN=scheduler.clients.relay.internal)",
    ),
    ("media-cdn", "origin-client"): (
        "object-store",
        "TLS handshake error from 10.20.8.40: client certificate expired (CN=media-cdn.clients.relay.internal)",
    ),
    ("api-gateway", "client-to-upstreams"): (
        "catalog-api",
        "http: TLS handshake error from 10.20.0.9:40022: tls: client certificate expired (CN=api-gateway.clients.relay.internal)",
    ),
}

# Minutes since the bad certificate expired, dealt to the rows in turn (2: it expired as the
# page went out, and the evidence is two minutes deep).
EXPIRED = (9, 14, 2, 22, 31, 17, 26)


def _key(service: str, cert: str) -> str:
    return f"{service}__{cert}".replace("-", "_")


def tables() -> list[dict[str, object]]:
    """The fault axis, one table per row."""
    out = []
    for n, (service, cert, pager, pager_lines, root_lines, effects, difficulty) in enumerate(ROWS):
        rng = random.Random(f"tls:{service}:{cert}")
        expired = EXPIRED[n % len(EXPIRED)]
        expires = {}
        for s, c, _ in INVENTORY:
            valid = float(rng.randrange(20, 85) * 1440 + rng.randrange(0, 1440))
            expires[_key(s, c)] = -float(expired) if (s, c) == (service, cert) else valid
        host = next(h for s, c, h in INVENTORY if (s, c) == (service, cert))[0]
        peer, peer_line = PEERS.get((service, cert), ("", ""))
        added = {s: m for s, m in effects.items() if any(m.values())}
        out.append(
            {
                "key": f"{service}/{cert}",
                "service": service,
                "cert": cert,
                "host": host,
                "pager": pager,
                "caller": pager != service,
                "difficulty": difficulty,
                "expired_ago": expired,
                "peer": peer,
                "peer_line": peer_line,
                "pager_lines": pager_lines,
                "root_lines": root_lines,
                "effects": added,
                "symptoms": [s for s in added if s != service],
                "expires": expires,
            }
        )
    return out


def axes() -> str:
    """The main axis (and what follows from it)."""
    lines = ["# Every certificate, its expiry from the seed's table (see the module docstring)."]
    for service, cert, hostnames in INVENTORY:
        lines += [
            "[[certificates]]",
            f"service = {toml_value(service)}",
            f"name = {toml_value(cert)}",
            f"hostnames = {toml_value(hostnames)}",
            f'expires_in_minutes = "{{{{fault.expires.{_key(service, cert)}}}}}"',
        ]
    return fault_axis(tables()) + "\n" + "\n".join(lines) + "\n"
