"""How a client command reaches a server: one set of flags, their environment fallbacks, the client.

Every command that talks to a server (rollout, llm, demo, health, loadtest) takes these flags from
`add_connection_flags`, so `--target`, TLS and the admin token work the same everywhere:

- `--target HOST:PORT`, else `$METASRE_TARGET`; commands that can start a server of their own do
  so when neither is set.
- `--tls` (system roots) or `--tls-ca FILE` (a private CA or a self-signed certificate, else
  `$METASRE_TLS_CA`), `--tls-server-name` when the certificate names another host.
- `--admin-token-env NAME`: the variable holding the admin token (default `METASRE_ADMIN_TOKEN`);
  the token itself never goes on the command line, where `ps` would show it.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .errors import UsageError

if TYPE_CHECKING:
    import grpc

    from ..agents.client import MetasreClient
    from ..agents.sync import SyncClient

TARGET_ENV = "METASRE_TARGET"
TLS_CA_ENV = "METASRE_TLS_CA"
ADMIN_TOKEN_ENV = "METASRE_ADMIN_TOKEN"


def add_connection_flags(parser: argparse.ArgumentParser, *, local: str) -> None:
    """The connection flags; `local` says what happens with no target (for the help)."""
    g = parser.add_argument_group("connection")
    g.add_argument(
        "--target",
        metavar="HOST:PORT",
        help=f"the server to use (else ${TARGET_ENV}; with neither: {local})",
    )
    g.add_argument("--tls", action="store_true", help="connect with TLS, trusting the system CAs")
    g.add_argument(
        "--tls-ca",
        metavar="FILE",
        help=f"connect with TLS, trusting this PEM certificate or CA bundle (else ${TLS_CA_ENV})",
    )
    g.add_argument(
        "--tls-server-name",
        metavar="NAME",
        help="the host name the server's certificate must name, when not the target's",
    )
    g.add_argument(
        "--admin-token-env",
        default=ADMIN_TOKEN_ENV,
        metavar="NAME",
        help="environment variable holding the server's admin token, if it has one",
    )


@dataclass(frozen=True, slots=True)
class Connection:
    """Where the server is and how to talk to it, from the flags and the environment."""

    target: str | None
    """host:port, or None for a server the command starts itself."""
    tls: bool = False
    tls_ca: bytes | None = None
    """The trusted certificates (PEM), or None for the system's."""
    tls_server_name: str | None = None
    admin_token: str | None = None
    admin_token_env: str = ADMIN_TOKEN_ENV

    @classmethod
    def from_args(cls, args: argparse.Namespace, default: str | None = None) -> Connection:
        """The connection the flags ask for, the environment filling what they leave out.

        `default`: the target when neither flag nor environment names one (None: the command
        starts a server of its own).

        Raises:
            UsageError: the CA file cannot be read, or TLS is asked for a local server.
        """
        target = args.target or os.environ.get(TARGET_ENV) or default
        if target and ":" not in target:
            # gRPC would quietly try port 443.
            source = "--target" if args.target else f"${TARGET_ENV}"
            raise UsageError(
                f"{source} {target!r} has no port; write HOST:PORT, e.g. {target}:50051"
            )
        ca_path = args.tls_ca or os.environ.get(TLS_CA_ENV) or None
        tls = bool(args.tls or ca_path)
        if tls and not target:
            raise UsageError(
                f"TLS needs --target (or ${TARGET_ENV}): a server this command starts itself "
                "serves plaintext on 127.0.0.1"
            )
        ca: bytes | None = None
        if ca_path:
            try:
                ca = Path(ca_path).read_bytes()
            except OSError as exc:
                raise UsageError(
                    f"cannot read the TLS certificate {ca_path}: {exc.strerror}; give a PEM "
                    "file with --tls-ca"
                ) from None
        token = (os.environ.get(args.admin_token_env) or None) if target else None
        return cls(target, tls, ca, args.tls_server_name, token, args.admin_token_env)

    def credentials(self) -> grpc.ChannelCredentials | None:
        """TLS credentials, or None for plaintext."""
        if not self.tls:
            return None
        import grpc

        return grpc.ssl_channel_credentials(root_certificates=self.tls_ca)

    def options(self) -> Sequence[tuple[str, Any]]:
        """Channel options (the name the certificate must carry)."""
        if self.tls and self.tls_server_name:
            return (("grpc.ssl_target_name_override", self.tls_server_name),)
        return ()

    def sync_client(
        self, address: str, *, factory: type[SyncClient] | None = None, **kwargs: Any
    ) -> SyncClient:
        """A blocking client for `address` (the target, or a local server's address)."""
        from ..agents.sync import SyncClient

        return (factory or SyncClient)(
            address,
            admin_token=self.admin_token,
            credentials=self.credentials(),
            options=self.options(),
            **kwargs,
        )

    def client(self, address: str, **kwargs: Any) -> MetasreClient:
        """An async client for `address`."""
        from ..agents.client import MetasreClient

        return MetasreClient(
            address,
            admin_token=self.admin_token,
            credentials=self.credentials(),
            options=self.options(),
            **kwargs,
        )

    def channel(self, address: str) -> grpc.Channel:
        """A blocking gRPC channel (for the standard services, such as health)."""
        import grpc

        credentials = self.credentials()
        if credentials is None:
            return grpc.insecure_channel(address, self.options())
        return grpc.secure_channel(address, credentials, self.options())

    def token_hint(self) -> str:
        """What to do when the server wants a token it did not get (or a different one)."""
        if not self.target:
            return ""
        held = "is empty or unset" if self.admin_token is None else "holds another token"
        return (
            f"; ${self.admin_token_env} {held}: export the server's admin token there, or "
            "name the variable that holds it with --admin-token-env NAME"
        )
