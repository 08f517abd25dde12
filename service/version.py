"""The protocol and software versions the server reports."""

PROTOCOL_VERSION = "metasre.v1"
"""The wire protocol this server speaks."""
SERVER_VERSION = "0.1.0"
"""This server's software version."""
