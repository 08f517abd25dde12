"""payment-bad-deploy, checkout-crash-loop and user-service-oom: the three operational families
on the shop whose tables their modules in tools/families/axes/ write.

What `metasre validate` cannot see: every
table's evidence reads as its own category (and the callers' as none) by the expert's rules,
and the code tree tells the same story as the logs (the bad release is in deploy.yaml, only
the stuck service connects straight to a cached mongo-db primary).
"""

from __future__ import annotations

import importlib

import pytest

from metasre.agents.policies.evidence import categorise, mentioned
from metasre.simulator import resolve

FAMILIES = {
    "meta-sre/payment-bad-deploy-v2": "payment_bad_deploy",
    "meta-sre/checkout-crash-loop-v2": "checkout_crash_loop",
    "meta-sre/user-service-oom-v2": "user_service_oom",
}
READ = ("WARN", "ERROR", "FATAL")  # what the expert reads


def _generator(folder: str):
    return importlib.import_module(f"tools.families.axes.{folder}")


def _tables(scenario_id: str) -> int:
    return len(_generator(FAMILIES[scenario_id]).SITES)


@pytest.mark.parametrize("scenario_id", sorted(FAMILIES))
def test_every_table_reads_as_its_category_and_its_callers_as_none(scenario_id):
    entry = resolve(scenario_id)
    keys = set()
    for seed in range(_tables(scenario_id)):  # stratified: one cycle meets every table
        spec = entry.spec(seed)
        truth = spec.ground_truth
        names = [s.name for s in spec.services]
        terminal = [t.text for f in spec.faults for t in f.terminal]
        lines: dict[str, list[str]] = {}
        for fault in spec.faults:
            for block in fault.logs:
                if block.level in READ:
                    lines.setdefault(block.service, []).extend(block.lines)
        keys.add(spec.ground_truth.location)
        root = lines[truth.service] + [t for t in terminal if mentioned(t, [truth.service], "")]
        assert categorise(root)[0] == truth.category, (seed, truth.service, root)
        for service, said in lines.items():
            if service == truth.service:
                continue
            seen = said + [t for t in terminal if mentioned(t, [service], "")]
            assert categorise(seen)[0] is None, (seed, service, seen)
            # A caller blames the root or another caller on the way, never anything else.
            for name in {n for line in said for n in mentioned(line, names, service)}:
                assert name == truth.service or name in truth.symptom_services, (seed, name)
    assert len(keys) == _tables(scenario_id) or scenario_id.endswith("oom-v2")


@pytest.mark.parametrize("scenario_id", sorted(FAMILIES))
def test_a_bad_release_is_the_one_in_the_repository(scenario_id):
    entry = resolve(scenario_id)
    for seed in range(_tables(scenario_id)):
        inst = entry.instance(seed)
        truth = inst.spec.ground_truth
        if not truth.location.startswith("deployment:"):
            continue
        bad = truth.location.partition("@")[2]
        code_dir = next(s.code_dir for s in inst.spec.services if s.name == truth.service)
        if code_dir:
            deploy = inst.tree.files[f"{code_dir}/deploy.yaml"]
            text = deploy.decode() if isinstance(deploy, bytes) else str(deploy)
            assert f"version: {bad}\n" in text, (seed, truth.service)


def test_only_the_stuck_service_connects_straight_to_the_cached_primary():
    entry = resolve("meta-sre/checkout-crash-loop-v2")
    fallback = "for uri in dict.fromkeys([mongo_uri(), config.MONGO_URI]):"
    for seed in range(_tables("meta-sre/checkout-crash-loop-v2")):
        inst = entry.instance(seed)
        fault = inst.values["fault"]
        for package, service in (
            ("inventory_service", "inventory-service"),
            ("order_service", "order-service"),
        ):
            main = inst.tree.files[f"{package}/main.py"]
            text = main.decode() if isinstance(main, bytes) else str(main)
            stuck = fault["mechanism"] == "mongo" and fault["service"] == service
            assert (fallback not in text) == stuck, (seed, service)


def test_the_start_up_code_that_went_stale_is_in_the_tree_only_where_it_did():
    """A stuck Python service's last words name a file in its emptyDir; the module that keeps
    it there is in the tree (and says that path) in exactly the seeds where it went stale."""
    entry = resolve("meta-sre/checkout-crash-loop-v2")
    modules = (
        "auth_service/startup.py",
        "notification_service/startup.py",
        "user_service/startup.py",
        "payment_service/startup.py",
        "checkout_service/drain_lock.py",
        "api_gateway/route_snapshot.py",
    )
    for seed in range(_tables("meta-sre/checkout-crash-loop-v2")):
        inst = entry.instance(seed)
        truth = inst.spec.ground_truth
        code_dir = next(s.code_dir for s in inst.spec.services if s.name == truth.service)
        present = [m for m in modules if m in inst.tree.files]
        stale = truth.category == "crash_loop" and inst.values["fault"]["mechanism"] != "mongo"
        if not (stale and code_dir):
            assert present == [], (seed, present)
            continue
        assert len(present) == 1 and present[0].startswith(code_dir + "/"), (seed, present)
        text = inst.tree.files[present[0]]
        text = text.decode() if isinstance(text, bytes) else str(text)
        last_words = next(
            line
            for f in inst.spec.faults
            for b in f.logs
            if b.service == truth.service and b.level == "FATAL"
            for line in b.lines
        )
        path = next(
            w.strip("(),") for w in last_words.split() if w.strip("(),").startswith("/var/")
        )
        assert path in text, (seed, path)
