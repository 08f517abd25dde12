"""Peak-load test of attachment reads: a burst of fetches and type sniffs (small files, files
over the size limit, unknown types, blobs whose read fails) against a media volume that allows
MAX_OPEN open handles; every handle is closed again, whatever the path."""

from whatsapp_sync import media

MAX_OPEN = 64


class FakeHandle:
    def __init__(self, volume, data, fail):
        self.volume, self.data, self.fail, self.closed = volume, data, fail, False

    def read(self, size):
        if self.fail:
            raise OSError(5, "Input/output error")
        return self.data[:size]

    def close(self):
        if not self.closed:
            self.closed = True
            self.volume.open_handles -= 1


class FakeVolume:
    def __init__(self, blobs):
        self.blobs, self.open_handles, self.refused = blobs, 0, 0

    def open(self, media_id):
        if media_id not in self.blobs and not media_id.startswith("bad-"):
            raise KeyError(media_id)
        if self.open_handles >= MAX_OPEN:
            self.refused += 1
            raise OSError(24, "Too many open files")
        self.open_handles += 1
        return FakeHandle(self, self.blobs.get(media_id, b""), media_id.startswith("bad-"))


def test_attachment_reads_close_every_handle():
    volume = FakeVolume({
        "jpg": b"\xff\xd8\xff\xe0" + b"x" * 100,
        "txt": b"hello world",
        "huge": b"%PDF" + b"x" * (media.config.MAX_MEDIA_BYTES + 10),
    })
    reader = media.MediaReader(volume)
    outcomes = {}
    for i in range(600):
        media_id = ("jpg", "txt", "huge", f"bad-{i}", "missing")[i % 5]
        call = reader.fetch if i % 2 else reader.sniff
        try:
            result = call(media_id)
            outcome = result if isinstance(result, str) else len(result)
        except (media.MediaTooLarge, KeyError, OSError) as exc:
            outcome = type(exc).__name__
        outcomes[outcome] = outcomes.get(outcome, 0) + 1
    assert volume.refused == 0, (
        f"{volume.refused} opens refused with 'Too many open files' ({volume.open_handles} of"
        f" {MAX_OPEN} handles still open): a code path opens a blob without closing it; {outcomes}"
    )
    assert volume.open_handles == 0, f"{volume.open_handles} blob handles still open"
