"""The audit trail of profile reads: who read which profile, with which scopes.

The trail goes to the shared log pipeline, which every engineer can search: it carries masked
contact details only, and says whether the caller was shown the raw ones.
"""

from __future__ import annotations

import logging
from typing import Collection

from whatsapp_sync.masking import mask_email, mask_phone
from whatsapp_sync.repository import User

logger = logging.getLogger("whatsapp_sync.audit")


def record_profile_read(user: User, scopes: Collection[str], revealed: bool) -> None:
    """Log one profile read for the audit trail."""
    logger.info(
        "profile read",
        extra={
            "user_id": user.user_id,
            "scopes": sorted(scopes),
            "revealed": revealed,
            "phone": mask_phone(user.phone),
            "email": mask_email(user.email),
        },
    )
