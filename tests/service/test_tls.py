"""TLS end to end: a certificate made at test time, `build_server` and `metasre serve` with it.

The self-signed certificate (for 127.0.0.1 and localhost) comes from the `cryptography` package,
so no openssl binary is needed. Clients trust exactly that certificate; a plaintext client and a
client that trusts another certificate are refused.
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime
import ipaddress
import sys
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import grpc
import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID
from grpc_health.v1 import health_pb2, health_pb2_grpc

from metasre.service import ServerConfig, build_server
from metasre.v1 import control_pb2, control_pb2_grpc

from .conftest import TIMEOUT, one_call
from .serve_process import metasre_serve


@dataclass(frozen=True)
class Certificate:
    cert: Path
    key: Path
    pem: bytes


def self_signed(directory: Path, name: str) -> Certificate:
    """A P-256 self-signed certificate valid for 127.0.0.1 and localhost, written as PEM."""
    key = ec.generate_private_key(ec.SECP256R1())
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "localhost")])
    now = datetime.datetime.now(datetime.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(
            x509.SubjectAlternativeName(
                [x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]
            ),
            critical=False,
        )
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    pem = cert.public_bytes(serialization.Encoding.PEM)
    paths = Certificate(directory / f"{name}.pem", directory / f"{name}.key", pem)
    paths.cert.write_bytes(pem)
    paths.key.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    paths.key.chmod(0o600)
    return paths


@pytest.fixture(scope="module")
def tls(tmp_path_factory: pytest.TempPathFactory) -> Certificate:
    return self_signed(tmp_path_factory.mktemp("tls"), "server")


@pytest.fixture(scope="module")
def stranger(tmp_path_factory: pytest.TempPathFactory) -> Certificate:
    """Another self-signed certificate, which the server does not have."""
    return self_signed(tmp_path_factory.mktemp("tls-other"), "other")


@contextlib.asynccontextmanager
async def tls_channel(
    address: str, root: bytes, *options: tuple[str, str]
) -> AsyncIterator[grpc.aio.Channel]:
    credentials = grpc.ssl_channel_credentials(root_certificates=root)
    async with grpc.aio.secure_channel(address, credentials, options=options) as channel:
        yield channel


async def play_over(channel: grpc.aio.Channel) -> None:
    """Health, a control call, and an agent's Connect stream with a tool call."""
    health = await health_pb2_grpc.HealthStub(channel).Check(
        health_pb2.HealthCheckRequest(), timeout=TIMEOUT
    )
    assert health.status == health_pb2.HealthCheckResponse.SERVING
    (await one_call(channel)).close()


async def assert_refused(channel: grpc.aio.Channel) -> None:
    control = control_pb2_grpc.ControlServiceStub(channel)
    with pytest.raises(grpc.aio.AioRpcError) as err:
        await control.GetServerInfo(control_pb2.GetServerInfoRequest(), timeout=TIMEOUT)
    assert err.value.code() == grpc.StatusCode.UNAVAILABLE


async def test_build_server_with_tls_serves_only_tls(tls: Certificate, stranger: Certificate):
    server = await build_server(
        ServerConfig(port=0, tls_cert=tls.cert, tls_key=tls.key, grace_seconds=0.5)
    )
    await server.start()
    try:
        async with tls_channel(server.address, tls.pem) as channel:
            await play_over(channel)
        # The certificate's DNS name is checked too (localhost, dialled at 127.0.0.1).
        async with tls_channel(
            server.address, tls.pem, ("grpc.ssl_target_name_override", "localhost")
        ) as channel:
            await play_over(channel)
        # A plaintext client, and a TLS client that trusts another certificate: refused.
        async with grpc.aio.insecure_channel(server.address) as channel:
            await assert_refused(channel)
        async with tls_channel(server.address, stranger.pem) as channel:
            await assert_refused(channel)
        # Refused at the handshake; the server is still up for TLS clients.
        async with tls_channel(server.address, tls.pem) as channel:
            await play_over(channel)
    finally:
        await server.stop(0.5)


async def test_metasre_serve_with_tls_flags(tls: Certificate):
    async with metasre_serve("--tls-cert", str(tls.cert), "--tls-key", str(tls.key)) as served:
        async with tls_channel(served.address, tls.pem) as channel:
            await play_over(channel)
        async with grpc.aio.insecure_channel(served.address) as channel:
            await assert_refused(channel)
        assert await served.stop() == 0
    serving = next(e for e in served.events() if e["event"] == "serving")
    assert serving["tls"] is True


async def test_tls_needs_both_the_certificate_and_the_key(tls: Certificate):
    with pytest.raises(ValueError, match="both a certificate and a key"):
        ServerConfig(tls_cert=tls.cert)
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "metasre.cli.main",
        "serve",
        "--port",
        "0",
        "--tls-key",
        str(tls.key),
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await asyncio.wait_for(proc.communicate(), TIMEOUT)
    assert proc.returncode == 2 and not out
    assert "TLS needs both a certificate and a key" in err.decode()
