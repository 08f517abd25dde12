"""Shared by every courier service."""
