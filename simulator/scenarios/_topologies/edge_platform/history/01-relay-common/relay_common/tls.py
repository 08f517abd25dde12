"""Certificate checks, in the words Go and OpenSSL clients use for them.

A certificate is valid from not_before to not_after with no leeway, must chain to a CA the
checker trusts (itself valid), and must name the host it is presented for.
"""

from dataclasses import dataclass


class X509Error(Exception):
    """A certificate was refused."""


@dataclass(frozen=True)
class Certificate:
    """What the checks read from a certificate (times in epoch seconds)."""

    subject: str
    issuer: str
    not_before: int
    not_after: int
    hostnames: tuple = ()
    is_ca: bool = False


def _window(cert, now):
    if now > cert.not_after:
        raise X509Error(
            "x509: certificate has expired or is not yet valid: current time "
            f"{now} is after {cert.not_after}"
        )
    if now < cert.not_before:
        raise X509Error(
            "x509: certificate has expired or is not yet valid: current time "
            f"{now} is before {cert.not_before}"
        )


def validate(cert, trusted, hostname, now):
    """Accept `cert` for `hostname` at `now` against the `trusted` CA certificates.

    Returns the subject of the CA it chains to.
    """
    _window(cert, now)
    ca = next((c for c in trusted if c.is_ca and c.subject == cert.issuer), None)
    if ca is None:
        raise X509Error("x509: certificate signed by unknown authority")
    _window(ca, now)
    if hostname and not any(_matches(pattern, hostname) for pattern in cert.hostnames):
        names = ", ".join(cert.hostnames) or "no names"
        raise X509Error(f"x509: certificate is valid for {names}, not {hostname}")
    return ca.subject


def _matches(pattern, hostname):
    if pattern.startswith("*."):
        head, _, rest = hostname.partition(".")
        return bool(head) and rest == pattern[2:]
    return pattern == hostname


def days_left(cert, now):
    """Whole days before `cert` expires (negative once it has)."""
    return (cert.not_after - now) // 86400
