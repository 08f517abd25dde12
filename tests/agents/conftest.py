"""The client and agent tests: the sandbox first; the server is tests/conftest.py's."""

from __future__ import annotations

import pytest

from metasre.service.server import prepare_sandbox


@pytest.fixture(scope="session", autouse=True)
def _sandbox() -> None:
    # The fork server starts before any gRPC server or thread exists.
    prepare_sandbox()
