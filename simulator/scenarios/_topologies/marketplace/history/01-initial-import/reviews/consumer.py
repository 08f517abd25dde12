"""reviews consumer: moderation-results in, whether the review is shown."""

HIDE = frozenset({"spam", "abuse", "personal_data"})


def visible_after(result):
    """Whether a review stays visible after moderation, and the reason when it does not."""
    labels = set(result.get("labels", ()))
    hidden = sorted(labels & HIDE)
    return {"visible": not hidden, "reasons": hidden}
