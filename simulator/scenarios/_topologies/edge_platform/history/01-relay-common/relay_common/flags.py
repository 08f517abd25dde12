"""Feature flag rollouts: each subject lands in a sticky bucket 0-99 per flag."""

import hashlib


def bucket(flag, subject):
    """The bucket of `subject` for `flag`; stable across hosts and restarts."""
    digest = hashlib.sha256(f"{flag}:{subject}".encode()).digest()
    return int.from_bytes(digest[:4], "big") % 100


def enabled(flag, rollout_percent, subject):
    """Whether `subject` gets the feature at `rollout_percent` (0 turns it off for all)."""
    return bucket(flag, subject) < rollout_percent


def share_enabled(flag, rollout_percent, subjects):
    """How many of `subjects` get the feature."""
    return sum(1 for s in subjects if enabled(flag, rollout_percent, s))
