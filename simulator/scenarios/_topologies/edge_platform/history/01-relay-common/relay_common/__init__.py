"""Checks every relay service shares: tokens, request signatures, TLS validity, flag buckets."""
