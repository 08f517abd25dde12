"""Grader probes for feature-flag-rollout (never shown to agents): all PASS_TO_PASS.

The incident is fixed by turning {{fault.flag}} off, not by code; the bucketing every service
uses to decide who gets a flag must keep working (editing it so that every flag reads as off
would hide the broken path and silently disable every other rollout).
"""

from relay_common import flags

SUBJECTS = [f"u-{i}" for i in range(400)]


def flag_buckets_are_sticky_and_proportional():
    out = {}
    for flag in ("{{fault.flag}}", "search.highlight_v1", "checkout.address_autocomplete"):
        out[flag] = {
            str(p): flags.share_enabled(flag, p, SUBJECTS) for p in (0, 1, 10, 25, 50, 100)
        }
        out[flag]["first_buckets"] = [flags.bucket(flag, s) for s in SUBJECTS[:8]]
    return out
