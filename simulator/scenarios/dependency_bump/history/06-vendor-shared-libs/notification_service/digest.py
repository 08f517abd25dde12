"""notification-service weekly digest: the subject and preview line of the digest e-mail.

Marketing edits the templates; a field the digest does not know yet (they add them before
we ship them) must stay visible rather than break the send.
"""

from notification_service._vendor import tmpl

SUBJECT = "{name}, your week: {orders}"
PREVIEW = "Latest: {latest} {promo}"


def digest(name, order_titles):
    """Subject and preview text of one customer's weekly digest."""
    subject = tmpl.render(SUBJECT, {"name": name, "orders": tmpl.pluralize(len(order_titles), "order")})
    latest = order_titles[-1] if order_titles else "nothing yet"
    preview = tmpl.render(PREVIEW, {"latest": latest})
    return {"subject": subject, "preview": tmpl.truncate(preview, 40, ellipsis="\u2026")}
