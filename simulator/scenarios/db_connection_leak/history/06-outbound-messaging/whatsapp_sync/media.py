"""Media attachments of inbound messages: read from the blob store, sized and typed.

Every read opens one blob handle (a file descriptor on the media volume) and closes it on every
path, with `closing()`; a replica may hold at most config.MAX_OPEN_MEDIA handles at once.
"""

from __future__ import annotations

from contextlib import closing
from typing import Protocol

from whatsapp_sync import config

SIGNATURES = (
    (b"\xff\xd8\xff", "image/jpeg"),
    (b"\x89PNG", "image/png"),
    (b"%PDF", "application/pdf"),
    (b"OggS", "audio/ogg"),
)


class MediaTooLarge(ValueError):
    """Raised when an attachment is larger than config.MAX_MEDIA_BYTES."""


class BlobHandle(Protocol):
    """An open blob: read it, then close it."""

    def read(self, size: int) -> bytes: ...

    def close(self) -> None: ...


class BlobStore(Protocol):
    """The media volume: opens a blob by id (KeyError when there is none)."""

    def open(self, media_id: str) -> BlobHandle: ...


class MediaReader:
    """Reads attachments for the inbound webhook and the inbox."""

    def __init__(self, store: BlobStore) -> None:
        self._store = store

    def fetch(self, media_id: str) -> bytes:
        """The attachment's bytes.

        Raises:
            MediaTooLarge: it is larger than config.MAX_MEDIA_BYTES.
        """
        with closing(self._store.open(media_id)) as handle:
            data = handle.read(config.MAX_MEDIA_BYTES + 1)
            if len(data) > config.MAX_MEDIA_BYTES:
                raise MediaTooLarge(f"attachment {media_id} is over {config.MAX_MEDIA_BYTES} bytes")
            return data

    def sniff(self, media_id: str) -> str:
        """The attachment's type from its first bytes, "application/octet-stream" if unknown."""
        with closing(self._store.open(media_id)) as handle:
            head = handle.read(8)
            for signature, kind in SIGNATURES:
                if head.startswith(signature):
                    return kind
            return "application/octet-stream"
