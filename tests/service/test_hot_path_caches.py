"""Issue 34's hot path: what the server keeps between calls gives the same answers as before."""

from __future__ import annotations

import copy

from metasre.service.core import openings
from metasre.service.store.sqlite import SessionRow, TrajectoryStore
from metasre.simulator import Episode, Observation


def test_interleaved_sessions_render_each_observation_once(monkeypatch):
    # Sessions interleave between a call's stored record and its caller's result: each
    # observation's text is made once, and is the text its own render gives.
    # Copies: an opening's observation is shared between episodes, and another test in this
    # process may have had its text made already.
    first = copy.copy(Episode.make("meta-sre/migration-cascade-v3", 0).observation())
    second = copy.copy(Episode.make("meta-sre/ad-ranking-crash-v2", 1).observation())
    renders: list[int] = []
    real = Observation.render

    def counted(self: Observation) -> str:
        renders.append(id(self))
        return real(self)

    monkeypatch.setattr(Observation, "render", counted)
    texts = [openings.observation_text(o) for o in (first, second, first, second)]
    assert sorted(renders) == sorted([id(first), id(second)])
    assert texts == [real(first), real(second), real(first), real(second)]


def test_the_kept_request_lookup_sees_every_later_commit(tmp_path):
    store = TrajectoryStore(tmp_path / "t.db")
    try:
        assert store.request("k1") is None  # opens the kept connection before the write
        row = SessionRow("s1", "meta-sre/ad-ranking-crash-v2", 7, {}, 1.0, None)
        store.submit([store.session_op(row), store.request_op("k1", "s1", "f1")]).result()
        assert store.request("k1") == ("s1", "f1")
        assert store.request("k2") is None
    finally:
        store.close()
    assert store._lookup is None  # closed with the store
