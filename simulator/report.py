"""The structured incident report agents submit, and how it is compared with the answer key."""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field

from .paths import normalize_path
from .scenarios.spec import Category, Remediation

_TYPED_PREFIXES = (
    "deployment:",
    "migration:",
    "service:",
    "config:",
    "flag:",
    "certificate:",
    "queue:",
)
"""Locations that name a thing in the world rather than a file: a release, a migration, a
service, or one of a service's runtime settings (a config key, a flag, a certificate, a queue)."""


class IncidentReport(BaseModel):
    """What the team concludes; each field is compared with the ground truth on its own."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    root_cause_service: str = Field(
        max_length=64, description="The one service where the fault lives."
    )
    root_cause_location: str = Field(
        max_length=512,
        description="Where exactly, by what was wrong: in the code, the file's path "
        "('ad_ranking/ranker.py'); a release, 'deployment:<service>@<version>'; a migration, "
        "'migration:<id>'; a config key, 'config:<key>'; a feature flag, 'flag:<name>'; a "
        "certificate, 'certificate:<name>'; a queue's message, 'queue:<name>'; the running "
        "service itself (capacity, a crash loop, its clock, its cache), 'service:<name>'.",
    )
    category: Category = Field(description="The kind of failure.")
    remediation: Remediation = Field(description="What the team did that resolved it.")
    summary: str = Field(
        min_length=20, max_length=4000, description="What happened, why, and how it was fixed."
    )
    timeline: list[Annotated[str, Field(max_length=500)]] = Field(
        default_factory=list,
        max_length=50,
        description="Key events, oldest first (optional): at most 50, of 500 characters each.",
    )


def normalize_location(location: str) -> str:
    """Canonical form of a report location, so equivalent spellings compare equal.

    File paths lose `./`, a leading `/` and a `:line` or `:a-b` suffix; typed locations are
    lower-cased and trimmed.
    """
    text = location.strip()
    lowered = text.lower()
    if lowered.startswith(_TYPED_PREFIXES):
        kind, _, rest = lowered.partition(":")
        return f"{kind}:{rest.strip()}"
    head, sep, tail = text.rpartition(":")
    if sep and tail.replace("-", "").isdigit():
        text = head
    try:
        return normalize_path(text)
    except Exception:  # a malformed path simply does not match anything
        return text


def locations_match(claimed: str, truth: str) -> bool:
    """Whether a report's location names the ground truth's location."""
    want = normalize_location(truth)
    got = normalize_location(claimed)
    if got == want:
        return True
    # 'migration:0042_x' may be given as just '0042_x'; likewise for the other typed forms.
    if want.startswith(_TYPED_PREFIXES):
        return got == want.partition(":")[2]
    return False
