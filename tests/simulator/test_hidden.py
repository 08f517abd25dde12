"""Hidden checks: what a grader run reports, how the trusted side judges it, who may run it."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from metasre.simulator import Episode, sandbox
from metasre.simulator.hidden import GUESSES, canonical, guessable

SERVICE = b"def double(x):\n    return 2 * x\n"
PROBES = b"""
import asyncio
from svc import double

def plain():
    return {"b": [double(1), double(2)], "a": round(1 / 3, 6)}

def raises():
    return {}["missing"]

async def awaited():
    await asyncio.sleep(0)
    return [double(21)]

def not_json():
    return {1, 2}

def not_finite():
    return float("nan")

def huge():
    return "x" * 100_000

def chatty():
    print("PRINTED-IN-A-GRADER-RUN")
    return 1
"""
FILES = {"svc/__init__.py": SERVICE, "hidden/probes.py": PROBES}


@pytest.fixture(scope="module")
def grader() -> Iterator[sandbox.ForkServerRunner]:
    with sandbox.ForkServerRunner(purpose="grader") as runner:
        yield runner


def test_a_grader_run_reports_only_observations(grader: sandbox.ForkServerRunner) -> None:
    names = ["plain", "raises", "awaited", "not_json", "not_finite", "huge", "absent", "chatty"]
    report = grader.observe(FILES, "hidden/probes.py", names)
    assert report.status == "completed", report.message
    seen = {name: json.loads(text) for name, text in report.observations.items()}
    assert seen == {
        "plain": {"a": 0.333333, "b": [2, 4]},
        "raises": {"raised": "KeyError"},
        "awaited": [42],
        "not_json": {"unserialisable": "set"},
        "not_finite": {"unserialisable": "float"},
        "huge": {"too_long": 100_002},
        "absent": {"raised": "AttributeError"},
        "chatty": 1,
    }
    assert "PRINTED-IN-A-GRADER-RUN" not in repr(report)  # what a grader run prints is dropped


def test_runners_keep_to_their_purpose(grader: sandbox.ForkServerRunner) -> None:
    with pytest.raises(sandbox.WrongRunnerError, match="grader runs only"):
        grader.run({"tests/test_a.py": b"def test_a():\n    pass\n"}, ["tests/test_a.py"])
    with sandbox.ForkServerRunner() as visible, pytest.raises(sandbox.WrongRunnerError):
        visible.observe(FILES, "hidden/probes.py", ["plain"])
    with pytest.raises(sandbox.WrongRunnerError):
        sandbox.default_runner().inner.observe(FILES, "hidden/probes.py", ["plain"])  # type: ignore[attr-defined]


def test_a_probe_module_that_fails_to_import_observes_nothing(
    grader: sandbox.ForkServerRunner,
) -> None:
    broken = {**FILES, "svc/__init__.py": b"raise SystemExit(0)\n"}
    report = grader.observe(broken, "hidden/probes.py", ["plain"])
    assert report.status == "collection_error"
    assert report.observations == {}


def test_canonical_json_and_blind_guesses() -> None:
    assert canonical('{"b": 1, "a": [1.0, "x"]}') == '{"a":[1.0,"x"],"b":1}'
    assert canonical("not json") is None and canonical(None) is None
    for blind in ("null", "true", "200", "{}", '{"raised":"KeyError"}', '{"status":200}'):
        assert guessable(canonical(blind) or "")
    assert not guessable('{"order":["ad-2","ad-1"],"status":200}')
    assert all(canonical(g) == g for g in GUESSES)


@pytest.mark.parametrize(
    "scenario",
    [
        "meta-sre/ad-ranking-crash-v2",
        "meta-sre/db-connection-leak-v2",
        "meta-sre/pii-exposure-v2",
        "meta-sre/timestamp-corruption-v2",
    ],
)
def test_code_checks_flip_with_the_reference_fix_and_no_f2p_is_guessable(scenario: str) -> None:
    ep = Episode.make(scenario, 1)
    spec = ep.instance.spec
    start = ep.code_checks()
    assert not any(start[c] for c in spec.hidden.fail_to_pass)
    assert all(start[c] for c in spec.hidden.pass_to_pass)
    assert ep.guessable_checks() == []
    ep.play_steps([s for s in spec.solution if s.tool != "submit_report"])
    assert all(ep.code_checks().values())


# A run that has defeated the in-process guard (an exception raised by the audit hook hands out
# its frame, and through it the cell holding the function that refuses) and reads its own pages
# with ctypes: every page around its heap, probed with write() into a pipe.
SCAN = r"""
import ctypes, hashlib, os, re, sys, uuid

def _defeat_guard():
    try:
        open("/etc/hostname")
    except BaseException as exc:
        tb = exc.__traceback__
        while tb is not None:
            for value in list(tb.tb_frame.f_locals.values()):
                code, cells = getattr(value, "__code__", None), getattr(value, "__closure__", None)
                if code is not None and cells:
                    named = dict(zip(code.co_freevars, cells))
                    if "refuse" in named:
                        named["refuse"].cell_contents = lambda kind, detail: None
                        return True
            tb = tb.tb_next
    return False

def _seen(patterns):
    libc = ctypes.CDLL(None)
    libc.write.argtypes = [ctypes.c_int, ctypes.c_void_p, ctypes.c_size_t]
    libc.write.restype = ctypes.c_ssize_t
    libc.sbrk.restype = ctypes.c_void_p
    rfd, wfd = os.pipe()
    seen, found = set(), set()
    for seed in (libc.sbrk(0) - 4096, id(object()), id("x" * 3000), id(sys)):
        for step in (-4096, 4096):
            addr, misses, prev = (seed & ~4095) + (0 if step < 0 else 4096), 0, b""
            while misses < 64 and len(seen) < 60000:
                if addr not in seen:
                    seen.add(addr)
                    if libc.write(wfd, addr, 4096) == 4096:
                        os.read(rfd, 4096)
                        page = ctypes.string_at(addr, 4096)
                        both = prev + page if step > 0 else page + prev
                        for pattern in patterns:
                            found.update(re.findall(pattern, both))
                        prev, misses = page, 0
                    else:
                        prev, misses = b"", misses + 1
                addr += step
    return found

def scan(marker_digest):
    # the earlier run's marker is known here only by its digest: its bytes are in no source
    mine = ("CONTROL-%s-here" % uuid.uuid4().hex).encode()  # made now, only in this memory
    found = _seen([rb"RESULT-[0-9a-f]{32}", rb"CONTROL-[0-9a-f]{32}-here"])
    digests = {hashlib.sha256(f).hexdigest() for f in found}
    return {"defeated": _defeat_guard_result, "control": mine in found,
            "found": marker_digest in digests}

_defeat_guard_result = _defeat_guard()
"""


@pytest.mark.parametrize("purpose", ["visible", "grader"])
def test_no_run_finds_an_earlier_runs_results_in_its_own_memory(purpose: str) -> None:
    """The helper never reads a run's frames or output, so a spare forked after a run carries
    none of it, even for code that reads its raw pages (hole found by the red team: the helper
    used to parse every reply in the memory later spares were forked from)."""
    import hashlib
    import uuid

    marker = f"RESULT-{uuid.uuid4().hex}"
    digest = hashlib.sha256(marker.encode()).hexdigest()
    files = {"svc/__init__.py": b"", "hidden/probes.py": b"", "tests/__init__.py": b""}
    with sandbox.ForkServerRunner(purpose=purpose, spares=0, rehearse=False) as runner:
        if purpose == "grader":
            first = runner.observe(
                {**files, "hidden/probes.py": f"def said():\n    return {marker!r}\n".encode()},
                "hidden/probes.py",
                ["said"],
            )
            assert marker in first.observations["said"]
            probe = SCAN + f"\ndef look():\n    return scan({digest!r})\n"
            report = runner.observe(
                {**files, "hidden/probes.py": probe.encode()}, "hidden/probes.py", ["look"]
            )
            seen = json.loads(report.observations["look"])
        else:
            said = f"def test_says():\n    print({marker!r})\n".encode()
            first = runner.run({**files, "tests/test_a.py": said}, ["tests/test_a.py"])
            assert marker in first.output
            look = SCAN + (
                "\nimport json\n"
                "def test_look():\n"
                f"    print('SEEN', json.dumps(scan({digest!r})))\n"
            )
            report = runner.run({**files, "tests/test_b.py": look.encode()}, ["tests/test_b.py"])
            line = next(x for x in report.output.splitlines() if x.startswith("SEEN "))
            seen = json.loads(line[5:])
    assert seen["defeated"] and seen["control"], seen  # the scan works, the guard is down
    assert not seen["found"], "a later run read an earlier run's results in its own memory"
