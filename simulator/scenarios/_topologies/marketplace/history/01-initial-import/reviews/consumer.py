"""reviews consumer: moderation-results in, whether the review is shown."""

HIDE = frozenset({"spam", "abuse", "personal_data"})


def visible_after(result):
    """Whether a review stays visible after moderation, and the reason when it does not."""
    labels = set(result.get("labels", ()))
    hidden = sorted(labels & HIDE)
    return {"visible": not hidden, "reasons": hidden}


def apply_vote(counts, vote):
    """Helpful/unhelpful counts of a review after one vote."""
    if vote["direction"] not in ("up", "down"):
        raise ValueError(f"unknown vote direction {vote['direction']!r}")
    key = "helpful" if vote["direction"] == "up" else "unhelpful"
    return {**counts, key: counts.get(key, 0) + 1}
