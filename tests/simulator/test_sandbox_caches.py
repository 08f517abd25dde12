"""What the fork server learns from runs: generated code, bytecode, and who may see it.

The helper compiles the code dataclasses and namedtuple generate, and keeps the bytecode its
client compiled, so later runs skip that work. These tests pin that the work is skipped,
that results do not change, and that no run can see what the helper learned from another.
"""

from __future__ import annotations

import importlib.util
import threading
import types
from collections.abc import Iterator

import pytest

import metasre.simulator.sandbox as sandbox
from metasre.simulator.sandbox import _bytecode
from metasre.simulator.sandbox.helper.accel import codegen as _codegen
from metasre.simulator.sandbox.helper.accel import memimport as _memimport

MODELS = b"""\
import collections
import enum
from dataclasses import dataclass, field
from typing import NamedTuple


class Kind(enum.Enum):
    A = "a"


@dataclass(frozen=True, order=True, slots=True)
class Ad:
    ad_id: str
    bid: float = 0.0
    tags: tuple[str, ...] = ()


@dataclass(kw_only=True)
class Basket:
    ads: list[Ad] = field(default_factory=list)
    kind: Kind = Kind.A


@dataclass
class Premium(Basket):
    boost: float = 1.5


class Pair(NamedTuple):
    left: int
    right: int = 0


Point = collections.namedtuple("Point", "x y")
"""

TESTS = b"""\
import dataclasses

import pytest_free_marker  # noqa: F401  (a plain module of the run: imports still work)
from shop.models import Ad, Basket, Pair, Point, Premium


def test_dataclasses_behave():
    assert Ad("a", 1.0) < Ad("b", 0.5)
    assert Ad("a") == Ad("a", 0.0, ())
    assert repr(Ad("x", 2.0)) == "Ad(ad_id='x', bid=2.0, tags=())"
    assert hash(Ad("a")) == hash(Ad("a"))
    try:
        Ad("a").bid = 3.0
    except dataclasses.FrozenInstanceError:
        pass
    else:
        raise AssertionError("frozen")
    assert Premium(ads=[Ad("a")]).boost == 1.5
    assert Basket().ads == [] and Basket().ads is not Basket().ads


def test_namedtuples_behave():
    assert Pair(1) == (1, 0) and Pair(1, 2).right == 2
    assert Point(1, 2)._asdict() == {"x": 1, "y": 2}


def test_the_generated_code_is_not_compiled_again():
    cached = getattr(dataclasses, "exec", None)  # the fork server's; not in a fresh python
    if cached is not None:
        print("compiled here:", len(cached.__globals__["_misses"]))


def test_a_failure_points_at_the_generated_init():
    Ad()
"""


def files(edit: int = 0) -> dict[str, bytes]:
    return {
        "shop/__init__.py": b"",
        "shop/models.py": MODELS,
        "pytest_free_marker.py": f"EDIT = {edit}\n".encode(),
        "tests/test_models.py": TESTS,
    }


@pytest.fixture(scope="module")
def runner() -> Iterator[sandbox.ForkServerRunner]:
    with sandbox.ForkServerRunner() as fork_server:
        yield fork_server


def test_a_later_run_compiles_no_generated_code_and_reports_the_same(
    runner: sandbox.ForkServerRunner,
) -> None:
    first = runner.run(files(0), ["tests/test_models.py"], shared=list(files(0)))
    second = runner.run(files(1), ["tests/test_models.py"], shared=list(files(1)))
    fresh = sandbox.SubprocessRunner().run(files(0), ["tests/test_models.py"])

    assert [o.status for o in first.outcomes] == ["passed", "passed", "passed", "error"]
    assert "compiled here: 0" not in first.output
    assert "compiled here: 0" in second.output
    # the cache changes the work done, never the result
    assert second.outcomes == first.outcomes == fresh.outcomes
    assert "TypeError: Ad.__init__() missing 1 required positional argument" in (
        second.outcomes[3].message
    )


def test_reports_stay_the_same_over_many_runs(runner: sandbox.ForkServerRunner) -> None:
    reports = [runner.run(files(10 + n), ["tests/test_models.py"]) for n in range(4)]

    assert all(r.outcomes == reports[0].outcomes for r in reports)


SECRET = "grader_answer_1415"


def secret_run(hold: bool) -> dict[str, bytes]:
    """A run whose code, generated code and output carry SECRET; it may spin until killed."""
    tests = (
        "from grading.answer import EXPECTED, Verdict\n\n"
        "def test_grade():\n    print(EXPECTED)\n    assert Verdict().__dict__\n"
    )
    if hold:
        tests += "\ndef test_hold():\n    while True:\n        pass\n"
    return {
        "grading/__init__.py": b"",
        "grading/answer.py": (
            "from dataclasses import dataclass\n\n"
            f"EXPECTED = '{SECRET}'\n\n"
            f"@dataclass\nclass Verdict:\n    {SECRET}: int = 0\n"
        ).encode(),
        "tests/test_grade.py": tests.encode(),
    }


SPY = f"""\
import collections
import dataclasses
import sys
import types

SECRET = "grader_answer_" + str({SECRET.rpartition("_")[2]})  # not a literal of this file
CONTAINERS = (list, tuple, set, frozenset, collections.deque)


def reachable():
    # everything reachable from this run's stack and from the sandbox's own tables
    roots = [dataclasses.exec.__globals__, collections.eval.__globals__]
    roots += [
        f.__globals__
        for finder in sys.meta_path
        for f in vars(type(finder)).values()
        if isinstance(f, types.FunctionType)
    ]
    frame = sys._getframe()
    while frame is not None:
        roots += [frame.f_locals, frame.f_globals]
        frame = frame.f_back
    seen, queue = set(), list(roots)
    while queue and len(seen) < 400_000:
        obj = queue.pop()
        if id(obj) in seen:
            continue
        seen.add(id(obj))
        if isinstance(obj, (str, bytes)):
            yield obj
        elif isinstance(obj, dict):  # the base class's own methods: no override may run
            queue += dict.keys(obj)
            queue += dict.values(obj)
        elif isinstance(obj, CONTAINERS):
            queue += next(t for t in CONTAINERS if isinstance(obj, t)).__iter__(obj)
        elif isinstance(obj, types.CodeType):
            queue += obj.co_consts + obj.co_names + obj.co_varnames
        elif isinstance(obj, types.FunctionType):
            queue += [obj.__code__, obj.__globals__]
            queue += [cell.cell_contents for cell in obj.__closure__ or ()]
        elif isinstance(obj, types.ModuleType):
            queue.append(vars(obj))
        elif not isinstance(obj, type):
            # plain attribute reads only: no __getattr__ or property of theirs may run
            try:
                queue.append(object.__getattribute__(obj, "__dict__"))
            except AttributeError:
                pass
            for slot in getattr(type(obj), "__slots__", ()):
                try:
                    queue.append(object.__getattribute__(obj, slot))
                except (AttributeError, TypeError):
                    pass


def test_no_other_run_is_visible():
    leaks = [
        text for text in reachable()
        if text is not SECRET
        and (SECRET in text if isinstance(text, str) else SECRET.encode() in text)
    ]
    assert not leaks, leaks[:3]
"""


def test_a_run_sees_nothing_the_helper_learned_from_another_run(
    runner: sandbox.ForkServerRunner,
) -> None:
    # the helper learns the secret run's bytecode from its start, its generated code at its end
    # shared: the worst case, where the helper may keep everything the secret run's files give
    learned = runner.run(
        secret_run(hold=False), ["tests/test_grade.py"], shared=list(secret_run(hold=False))
    )
    assert learned.ok and SECRET in learned.output
    spies = [runner.run({"tests/test_spy.py": SPY.encode()}, ["tests/test_spy.py"])]

    # and runs while another is in flight, whose output the helper already holds
    limits = sandbox.SandboxLimits(wall_timeout_s=0.5, cpu_seconds=1)
    worker = threading.Thread(
        target=runner.run,
        args=(secret_run(hold=True), ["tests/test_grade.py"]),
        kwargs={"limits": limits},
    )
    worker.start()
    try:
        spies += [
            runner.run({"tests/test_spy.py": f"{SPY}# {n}\n".encode()}, ["tests/test_spy.py"])
            for n in range(6)
        ]
    finally:
        worker.join()

    for spy in spies:
        assert spy.ok, (spy.status, spy.message, [o.message for o in spy.outcomes])


def test_a_run_with_the_same_file_gets_its_learned_code(runner: sandbox.ForkServerRunner) -> None:
    probe = (
        b"import dataclasses\n\n"
        b"def test_probe():\n"
        b"    print('compiled:', len(dataclasses.exec.__globals__['_misses']))\n"
    )
    suites = ["tests/test_models.py", "tests/test_probe.py"]
    runs = [
        runner.run(run, suites, shared=list(run))
        for run in ({**files(50 + n), "tests/test_probe.py": probe} for n in range(2))
    ]

    assert runs[1].output.rstrip().endswith("compiled: 0")


@pytest.mark.parametrize(
    ("spares", "rehearse"), [(0, False), (0, True), (2, False)], ids=["none", "one", "two"]
)
def test_every_spare_setting_serves_concurrent_runs(spares: int, rehearse: bool) -> None:
    reports: list[sandbox.RunReport] = []
    with sandbox.ForkServerRunner(spares=spares, rehearse=rehearse, max_concurrency=2) as runner:

        def work(n: int) -> None:
            reports.append(runner.run(files(100 + n), ["tests/test_models.py"]))

        threads = [threading.Thread(target=work, args=(n,)) for n in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()

    assert len(reports) == 4
    assert all(r.outcomes == reports[0].outcomes and r.failed + r.errors == 1 for r in reports)


# -- the pieces, in process -----------------------------------------------------------------------


@pytest.fixture
def codegen() -> types.ModuleType:
    """A private copy of _codegen, so its tables start empty and the test's stay its own."""
    spec = importlib.util.spec_from_file_location("_codegen_copy", _codegen.__file__)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_learn_compiles_only_texts_shaped_like_generated_code(codegen: types.ModuleType) -> None:
    owner = "ab" * 16
    text = "def __create_fn__(x):\n def __init__(self):\n  self.x = x\n return __init__"
    added = codegen.learn(
        [
            [owner, "exec", text],
            [owner, "exec", text],  # twice: once
            [owner, "exec", "import os"],  # not generated code
            [owner, "exec", "def __create_fn__(" + "x" * codegen.MAX_TEXT],  # too long
            [owner, "eval", "lambda _cls, a: (a"],  # does not compile
            ["zz" * 16, "eval", "lambda _cls, a: a"],  # not a key
            [owner, "exec"],  # malformed
            "nonsense",
        ]
    )

    assert added == 1
    code = codegen._owned[bytes.fromhex(owner)][("exec", text)]
    assert code.co_consts == compile(text, "<string>", "exec", dont_inherit=True).co_consts


def test_keep_only_leaves_a_child_its_own_files_texts(codegen: types.ModuleType) -> None:
    mine, theirs = _bytecode.file_key("a.py", b"x"), _bytecode.file_key("b.py", b"y")
    codegen.learn([[mine.hex(), "eval", "lambda _cls, a: a"]])
    codegen.learn([[theirs.hex(), "eval", "lambda _cls, b: b"]])

    dropped = codegen.keep_only("/run", {"a.py": mine})

    assert set(codegen._mine) == {("eval", "lambda _cls, a: a")}
    assert codegen._owned == {} and codegen._compiled == {}
    assert dropped  # the caller abandons these


def test_the_helper_forgets_the_oldest_files_first(codegen: types.ModuleType) -> None:
    entries = [
        [_bytecode.file_key(f"m{n}.py", b"").hex(), "eval", f"lambda _cls, a{n}: 1"]
        for n in range(codegen.MAX_ENTRIES + 10)
    ]
    for start in range(0, len(entries), codegen.MAX_MISSES):
        codegen.learn(entries[start : start + codegen.MAX_MISSES])

    assert codegen._owned_count == codegen.MAX_ENTRIES
    assert _bytecode.file_key("m0.py", b"") not in codegen._owned
    assert len(codegen._compiled) == codegen.MAX_ENTRIES


def test_compile_files_returns_the_same_pyc_objects_run_after_run() -> None:
    sources = {"m.py": b"X = 1\n", "bad.py": b"def (:\n", "notes.txt": b"x"}
    first = _bytecode.compile_files(sources)
    again = _bytecode.compile_files(dict(sources))

    pyc_path = importlib.util.cache_from_source("m.py")
    assert set(first.files) == {"m.py", "bad.py", "notes.txt", pyc_path}
    assert set(first.keys) == {"m.py", "bad.py"}
    assert first.keys["m.py"] == _bytecode.file_key("m.py", b"X = 1\n") != first.keys["bad.py"]
    assert first.lessons == [(first.keys["m.py"], first.files[pyc_path])]
    assert again.lessons[0][1] is first.lessons[0][1]
    assert again == first


def test_learned_bytecode_is_kept_only_for_the_runs_own_keys(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    for name, value in (("_learned", {}), ("_learned_sizes", {}), ("_learned_bytes", 0)):
        monkeypatch.setattr(_memimport, name, value)
    (mine,) = _bytecode.compile_files({"mine.py": b"A = 1\n"}).lessons
    (theirs,) = _bytecode.compile_files({"theirs.py": b"B = 2\n"}).lessons

    assert _memimport.learn_bytecode([mine, theirs, (b"k" * 16, b"not a pyc")]) == 2
    _memimport.keep_only([mine[0]])

    assert list(_memimport._learned) == [mine[0]]


def test_nothing_of_an_agents_own_files_is_kept(runner: sandbox.ForkServerRunner) -> None:
    """Files not shared (an agent's edits) teach the helper nothing: a later run with the same
    content compiles its generated code itself."""
    probe = (
        b"import dataclasses\n\n"
        b"def test_probe():\n"
        b"    print('compiled:', len(dataclasses.exec.__globals__['_misses']))\n"
    )
    suites = ["tests/test_models.py", "tests/test_probe.py"]
    # the models are this agent's edit: content no run of this module has sent before
    run = {**files(70), "shop/models.py": MODELS + b"# edited\n", "tests/test_probe.py": probe}
    mine = [p for p in run if p != "shop/models.py"]
    first = runner.run(run, suites, shared=mine)
    second = runner.run(run, suites, shared=mine)
    assert first.output == second.output
    assert not second.output.rstrip().endswith("compiled: 0")
