"""Run folders: removed whole, whatever the tests did to their permissions.

Stdlib only (used by the helper, and by the caller for its own base folder).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import stat

__all__ = ["remove_tree"]


def remove_tree(path: str) -> None:
    """Remove ``path`` even if the tests made parts of it read-only.

    Only what is inside ``path`` is ever unlocked: the folder holding it (``/dev/shm``, the
    temp directory) keeps its mode whatever fails, say a race with another remover.
    """
    root = os.path.normpath(path)

    def unlock(function: object, target: str, _exc: object) -> None:
        with contextlib.suppress(OSError):
            parent = os.path.dirname(target)
            if os.path.normpath(target) != root:
                os.chmod(parent, stat.S_IRWXU)
            if os.path.isdir(target) and not os.path.islink(target):
                os.chmod(target, stat.S_IRWXU)
                shutil.rmtree(target, ignore_errors=True)
            else:
                os.unlink(target)

    if os.path.lexists(path):
        shutil.rmtree(path, onerror=unlock)
