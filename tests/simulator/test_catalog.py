"""One catalogue holds what episodes share: two of them share nothing, and reload forgets."""

from __future__ import annotations

from metasre.simulator import Episode
from metasre.simulator.catalog import Catalog, default_catalog

AD = "meta-sre/ad-ranking-crash-v2"


def _graded_off_the_reference(catalog: Catalog) -> None:
    """The reference fix plus a comment line: code the grader has to run, not recognise."""
    episode = Episode.make(AD, 0, catalog=catalog)
    solution = episode.instance.spec.solution
    for step in solution[:-1]:
        episode.apply("fixer", step.tool, dict(step.args))
    fixed = next(s for s in solution if s.tool == "edit_lines").args["path"]
    end = len(episode.workspace.read(str(fixed)).splitlines()) + 1
    episode.apply(
        "fixer",
        "edit_lines",
        {"path": fixed, "action": "insert", "start_line": end, "content": "# checked"},
    )
    episode.apply("fixer", solution[-1].tool, dict(solution[-1].args))
    assert episode.grade().resolved


def test_two_catalogues_share_no_memo_and_reload_forgets_one(recorded_catalog):
    first, first_grader, first_traffic = recorded_catalog()
    second, second_grader, _ = recorded_catalog()
    _graded_off_the_reference(first)
    assert first_grader.runs and first_traffic.runs
    ran = len(first_grader.runs)
    _graded_off_the_reference(first)
    assert len(first_grader.runs) == ran  # the same code again: answered from its memo
    _graded_off_the_reference(second)
    assert second_grader.runs  # another catalogue runs for itself
    first.reload()
    _graded_off_the_reference(first)
    assert len(first_grader.runs) > ran


def test_an_episode_without_a_catalogue_uses_the_process_s_own():
    episode = Episode.make(AD, 0)
    assert episode.grade().total >= 0.0
    assert default_catalog() is default_catalog()
    assert Catalog().with_runner(None).runner is default_catalog().runner


MODULE_STATE = {
    # forgotten by Catalog.reload(): derived from scenario files by path, id or seed
    "simulator/scenarios/registry.py:_entries": "reload",
    "simulator/scenarios/registry.py:_retired": "reload",
    "simulator/scenarios/loader.py:_raw": "reload",
    "simulator/scenarios/loader.py:_spec": "reload",
    "simulator/scenarios/loader.py:_BUILT": "reload",
    "simulator/scenarios/mix.py:mixed_instance": "reload",
    "simulator/scenarios/mix.py:_catalogue": "reload",
    # keyed by the content they derive from, or pure functions of their arguments
    "simulator/scenarios/loader.py:_POOL": "spec entries keyed by their own JSON",
    "simulator/history.py:_SCANS": "a folder's listing; files are read by _TEXTS' key",
    "simulator/history.py:_COMMITS": "keyed by the commit's whole content",
    "simulator/history.py:_TEXTS": "keyed by path, size and modification time",
    "simulator/sandbox/_bytecode.py:_cache": "keyed by path and source bytes",
    "simulator/clock.py:stamp": "pure",
    "simulator/logs.py:_stream": "pure",
    "simulator/logs.py:_templates": "pure",
    "simulator/telemetry.py:_PLANS": "frozen plans keyed by themselves",
    "simulator/telemetry.py:_INDEXES": "keyed by the signal names they index",
    "simulator/telemetry.py:_layout": "keyed by the spec's values",
    "simulator/tools/files.py:_render": "keyed by the frozen view it renders",
    "simulator/probe_calls.py:shipped_source": "keyed by the probe module's bytes",
    "simulator/probe_calls.py:_probe_functions": "keyed by the probe module's bytes",
    "service/wire/struct_wire.py:_KEYS": "a key's encoded bytes, keyed by the key",
    "service/store/codec.py:_OPENING_RECORDS": "openings keyed by value (OpeningForms)",
    "service/core/openings.py:_rendered": "an observation's text, keyed by the object it renders",
    "service/wire/convert.py:_SHARED_OBSERVATIONS": "openings keyed by value (OpeningForms)",
    # the sandbox helper's own process, never the server's
    "simulator/sandbox/helper/accel/codegen.py:_public": "helper process",
    "simulator/sandbox/helper/accel/codegen.py:_mine": "helper process",
    "simulator/sandbox/helper/accel/codegen.py:_owned": "helper process",
    "simulator/sandbox/helper/accel/codegen.py:_compiled": "helper process",
    "simulator/sandbox/helper/accel/codegen.py:_file_keys": "helper process",
    "simulator/sandbox/helper/accel/codegen.py:_misses": "helper process",
    "simulator/sandbox/helper/accel/memimport.py:_learned": "helper process",
    "simulator/sandbox/helper/accel/memimport.py:_learned_sizes": "helper process",
    # clients' own
    "agents/plain.py:_converter": "pure",
    "agents/team_session.py:_ROLES": "per client object, weakly",
    "agents/trl_env.py:_CLIENTS": "TRL's environment factory has no other place to keep them",
    "cli/report/episodes.py:_entry": "keyed by file path, size and modification time",
}
"""Every module-level memo or mutable table of the product code, and why it may be there."""

MUTABLE_CALLS = ("Lru", "OrderedDict", "dict", "set", "defaultdict", "OpeningForms")


def _module_state() -> set[str]:
    import ast
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent.parent
    found = set()
    for folder in ("simulator", "service", "agents", "cli", "conformance", "ray_fleet"):
        for path in sorted((root / folder).rglob("*.py")):
            rel = path.relative_to(root)
            if rel.parts[:2] == ("simulator", "scenarios") and len(rel.parts) > 3:
                continue  # scenario worlds: the code agents read and repair
            for node in ast.parse(path.read_text(), str(path)).body:
                if isinstance(node, ast.FunctionDef):
                    for d in node.decorator_list:
                        f = d.func if isinstance(d, ast.Call) else d
                        name = f.attr if isinstance(f, ast.Attribute) else getattr(f, "id", "")
                        if name in ("lru_cache", "cache"):
                            found.add(f"{rel}:{node.name}")
                elif isinstance(node, ast.Assign | ast.AnnAssign) and node.value is not None:
                    value = node.value
                    empty = isinstance(value, ast.Dict | ast.List | ast.Set) and not (
                        getattr(value, "keys", None) or getattr(value, "elts", None)
                    )
                    if isinstance(value, ast.Call):
                        f = value.func
                        call = f.attr if isinstance(f, ast.Attribute) else getattr(f, "id", "")
                        empty = empty or call in MUTABLE_CALLS or "Weak" in call
                    targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                    if empty:
                        found |= {f"{rel}:{t.id}" for t in targets if isinstance(t, ast.Name)}
    return found


def test_every_module_memo_is_listed_with_why_it_may_be_there():
    """New process-wide state is a deliberate choice: into the catalogue, or listed here."""
    assert _module_state() == set(MODULE_STATE)


def test_reload_forgets_every_memo_derived_from_scenario_files():
    import importlib

    from metasre.simulator import resolve, scenario_ids

    mixed = next(e for e in map(resolve, scenario_ids()) if e.mix is not None)
    mixed.instance(0)
    Episode.make(AD, 0)
    catalog = default_catalog()
    catalog.reload()
    for where, why in MODULE_STATE.items():
        if why != "reload":
            continue
        path, name = where.split(":")
        module = importlib.import_module("metasre." + path.removesuffix(".py").replace("/", "."))
        memo = getattr(module, name)
        size = memo.cache_info().currsize if hasattr(memo, "cache_info") else len(memo)
        assert size == 0, where
