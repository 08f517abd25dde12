"""split-evidence and schema-release: incidents whose evidence is split across the roles' views.

Proved through the simulator, on seeds spread over 0-99: the full-view expert solves each seed
from calls that no single declared role can all make (a call is refused by the role's view, or
the role's view cuts what it returns), while for every call the expert made some role gets
exactly what the expert got (its alerts pooled over the roles), so the roles together hold the
evidence and the remedy. The scripted expert seated in any one role resolves nothing; a
scripted pair of roles that pass one fact between them (the service the failing one blames)
resolves the incident through their views alone.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import pytest

from metasre.agents.policies import ExpertPolicy
from metasre.agents.policies.base import ToolReply
from metasre.agents.policies.evidence import MIGRATION_ID
from metasre.conformance import EpisodeCaller
from metasre.simulator import Episode, resolve
from metasre.simulator.scenarios.spec import RoleSpec, ScenarioSpec
from metasre.simulator.tools import get_tool
from metasre.simulator.views import FULL, View, observe, owners_of, refusal

SPLIT = "meta-sre/split-evidence-v2"
SCHEMA = "meta-sre/schema-release-v2"
FOLDERS = {SPLIT: "split_evidence", SCHEMA: "schema_release"}
SEEDS = (0, 7, 19, 26, 38, 45, 53, 64, 71, 82, 90, 99)
NAVIGATION = frozenset({"check_dependencies"})
"""Calls that find the way rather than read evidence: every restricted view sees its part."""


@dataclass(frozen=True, slots=True)
class Call:
    tool: str
    args: dict[str, Any]
    reply: ToolReply


def _expert(family: str, seed: int) -> tuple[list[Call], Episode, ExpertPolicy]:
    """The full-view expert's calls on a seed, with what each returned."""
    episode = Episode.make(family, seed)
    caller = EpisodeCaller(episode, "expert")
    calls: list[Call] = []

    def record(tool: str, args: Mapping[str, Any]) -> ToolReply:
        reply = caller(tool, args)
        calls.append(Call(tool, dict(args), reply))
        return reply

    expert = ExpertPolicy()
    expert.play(record, episode.observation().to_dict())
    return calls, episode, expert


def _evidence(tool: str, data: Mapping[str, Any], remedy: str) -> dict[str, Any]:
    """What a call's result says about the incident: for describe_service, what the remedy
    acts on (the releases for a rollback_deployment, the migrations for a rollback_migration;
    its code folder or a database's own version are not evidence); for other calls, all of it."""
    if tool == "describe_service":
        keep = ("version", "releases") if remedy == "rollback_deployment" else ("migrations",)
        return {k: data.get(k) for k in keep}
    return dict(data)


def _alert_ids(data: Mapping[str, Any]) -> set[str]:
    return {str(a["id"]) for a in data.get("alerts", ())}


def _as_role(family: str, seed: int, calls: list[Call], role: RoleSpec) -> list[tuple[Call, Any]]:
    """What `role` gets for each of the expert's calls: a refusal (str) or the call's data.

    A twin episode takes the expert's calls in order, each under the role's view when the view
    allows it and under the full view when it refuses it: a view changes neither the world nor
    the clock, so the twin stays in step with the expert's episode and each call meets the
    same state.
    """
    twin = Episode.make(family, seed)
    owners = owners_of(twin.instance.spec)
    remedy = twin.instance.spec.ground_truth.remediation
    out: list[tuple[Call, Any]] = []
    for call in calls:
        if call.tool == "submit_report":
            break
        why = refusal(role.view, get_tool(call.tool), call.args, owners)
        result = twin.apply("twin", call.tool, call.args, view=FULL if why else role.view)
        out.append((call, why or _evidence(call.tool, result.output.data, remedy)))
    return out


def _unreachable(seen: list[tuple[Call, Any]], remedy: str) -> list[Call]:
    """The expert's evidence and remedy calls whose result the role cannot get as the expert
    did: refused, or cut by the view."""
    return [
        call
        for call, got in seen
        if call.tool not in NAVIGATION
        and (isinstance(got, str) or got != _evidence(call.tool, call.reply.data, remedy))
    ]


def _symptom(spec: ScenarioSpec) -> str:
    """The failing service whose errors name the root (the caller, or the writer)."""
    return spec.ground_truth.symptom_services[0]


@pytest.mark.parametrize("family", [SPLIT, SCHEMA])
@pytest.mark.parametrize("seed", SEEDS)
class TestTheEvidenceIsSplit:
    def test_no_role_can_reach_all_the_evidence_the_expert_used(self, family, seed):
        calls, episode, _ = _expert(family, seed)
        assert episode.grade().total >= 0.9
        spec = episode.instance.spec
        assert len(spec.roles) == 2
        for role in spec.roles:
            assert role.view != FULL
            missing = _unreachable(
                _as_role(family, seed, calls, role), spec.ground_truth.remediation
            )
            tools = {c.tool for c in missing}
            # Each role misses log lines the expert read, or the release or migration, or the
            # remedy itself: never only a call nobody needs.
            assert tools & {
                "read_logs",
                "describe_service",
                "rollback_deployment",
                "rollback_migration",
                "get_alerts",
            }, (role.name, tools)

    def test_the_roles_together_reach_every_piece_and_make_every_remedy_call(self, family, seed):
        calls, episode, _ = _expert(family, seed)
        spec = episode.instance.spec
        seen = {role.name: _as_role(family, seed, calls, role) for role in spec.roles}
        for i, call in enumerate(c for c in calls if c.tool != "submit_report"):
            if call.tool in NAVIGATION:
                continue
            got = [seen[r.name][i][1] for r in spec.roles]
            if call.tool == "get_alerts":
                # Each view shows the alerts of its services; pooled, they are the page.
                pooled = set().union(*(_alert_ids(g) for g in got if isinstance(g, dict)))
                assert _alert_ids(call.reply.data) <= pooled, (call, got)
                continue
            want = _evidence(call.tool, call.reply.data, spec.ground_truth.remediation)
            assert any(g == want for g in got), (call.tool, call.args, got)
        remedies = [c for c in calls if c.tool.startswith("rollback_")]
        assert len(remedies) == 1

    def test_the_lines_naming_the_cause_are_refused_to_the_seat_that_must_act(self, family, seed):
        """The symptom's errors (they name the root and what it rejected) reach only the
        application on-call; the root's own record (release or migration) and its remedy only
        the other role."""
        calls, episode, _ = _expert(family, seed)
        spec = episode.instance.spec
        owners = owners_of(spec)
        app, other = (
            _role(spec, "app-oncall"),
            next(r for r in spec.roles if r.name != "app-oncall"),
        )
        root, symptom = spec.ground_truth.service, _symptom(spec)
        read = next(c for c in calls if c.tool == "read_logs" and c.args["service"] == symptom)
        blame = [ln["text"] for ln in read.reply.data["lines"] if root in ln["text"]]
        assert blame, f"{symptom}'s errors do not name {root}"
        assert refusal(other.view, get_tool("read_logs"), read.args, owners)
        assert not refusal(app.view, get_tool("read_logs"), read.args, owners)
        remedy = next(c for c in calls if c.tool.startswith("rollback_"))
        assert refusal(app.view, get_tool(remedy.tool), remedy.args, owners)
        assert not refusal(other.view, get_tool(remedy.tool), remedy.args, owners)
        record = next(c for c in calls if c.tool == "describe_service")
        assert record.args["service"] == root
        assert refusal(app.view, get_tool("describe_service"), record.args, owners)
        # The other role's pager is silent: the failing services are not its own.
        twin = Episode.make(family, seed)
        alerts = twin.apply("twin", "get_alerts", {}, view=other.view).output.data["alerts"]
        assert not [a for a in alerts if a["service"] in spec.ground_truth.symptom_services]


def _role(spec: ScenarioSpec, name: str) -> RoleSpec:
    return next(r for r in spec.roles if r.name == name)


def _lines(episode: Episode, view: View, service: str) -> list[str]:
    data = episode.apply("seat", "read_logs", {"service": service, "level": "WARN"}, view=view)
    return [str(ln["text"]) for ln in data.output.data["lines"]]


@pytest.mark.parametrize("seed", SEEDS)
def test_split_evidence_the_release_manager_meets_a_train_of_lookalike_releases(seed):
    """Alone, the seat that can roll back cannot tell which of the train's releases to."""
    episode = Episode.make(SPLIT, seed)
    spec = episode.instance.spec
    manager = _role(spec, "release-manager")
    assert manager.view.services is not None and 7 <= len(manager.view.services) <= 9
    assert spec.ground_truth.service in manager.view.services
    shape = re.compile(r"does not exist in [a-z-]+ v\d+\.\d+\.\d+|does not exist in the v\d")
    for service in manager.view.services:
        describe = episode.apply(
            "seat", "describe_service", {"service": service}, view=manager.view
        )
        releases = describe.output.data["releases"]
        assert releases[-1]["minute"] > -60, (service, releases)
        assert describe.output.data["health"] == "healthy"
        warned = [ln for ln in _lines(episode, manager.view, service) if shape.search(ln)]
        assert warned, f"{service} logs no warning like the root's"


@pytest.mark.parametrize("seed", SEEDS)
def test_schema_release_the_dba_meets_two_databases_rejecting_rows(seed):
    episode = Episode.make(SCHEMA, seed)
    spec = episode.instance.spec
    dba = _role(spec, "dba")
    for db in ("catalog-db", "orders-db"):
        lines = _lines(episode, dba.view, db)
        assert any("violates" in ln and "constraint" in ln for ln in lines), db
        migrations = episode.apply("seat", "describe_service", {"service": db}, view=dba.view)
        ages = [m["applied_minute"] for m in migrations.output.data["migrations"]]
        assert max(ages) > -60, (db, ages)
        health = migrations.output.data["health"]
        assert health == "healthy"
    assert _alerts(episode, dba.view) == []


def _alerts(episode: Episode, view: View) -> list[Any]:
    return list(episode.apply("seat", "get_alerts", {}, view=view).output.data["alerts"])


@pytest.mark.parametrize("family", [SPLIT, SCHEMA])
@pytest.mark.parametrize("seed", SEEDS[::3])
def test_two_seats_that_pass_one_fact_resolve_it_through_their_views(family, seed):
    """The on-call reads its failing service's errors and says which dependency they blame;
    the other seat acts on that dependency with what its own view shows; the on-call reports."""
    episode = Episode.make(family, seed)
    spec = episode.instance.spec
    app = _role(spec, "app-oncall")
    other = next(r for r in spec.roles if r.name != "app-oncall")
    failing = [str(a["service"]) for a in _alerts(episode, app.view)]
    assert failing
    # The message: the dependency outside the on-call's view that its failing services blame.
    assert app.view.services is not None
    blamed_by = {
        d: s
        for s in failing
        for d in spec.service(s).depends_on
        if d not in app.view.services and any(d in ln for ln in _lines(episode, app.view, s))
    }
    assert len(blamed_by) == 1, blamed_by
    ((blamed, symptom),) = blamed_by.items()
    info = episode.apply("seat", "describe_service", {"service": blamed}, view=other.view)
    if family == SPLIT:
        version = info.output.data["version"]
        step = episode.apply("seat", "rollback_deployment", {"service": blamed}, view=other.view)
        location, remedy, category = (
            f"deployment:{blamed}@{version}",
            "rollback_deployment",
            "bad_deployment",
        )
    else:
        # Not the newest of the hour's migrations by rule: the one the database's own log says
        # added the constraint that rejects the rows, among those its view shows applied.
        applied = {m["id"] for m in info.output.data["migrations"]}
        named = [m for ln in _lines(episode, other.view, blamed) for m in MIGRATION_ID.findall(ln)]
        (target,) = {m for m in named if m in applied}
        step = episode.apply(
            "seat", "rollback_migration", {"service": blamed, "migration": target}, view=other.view
        )
        location, remedy, category = f"migration:{target}", "rollback_migration", "bad_migration"
    assert step.ok, step.output.text
    report = {
        "root_cause_service": blamed,
        "root_cause_location": location,
        "category": category,
        "remediation": remedy,
        "summary": f"{symptom} failed on every call to {blamed}; {remedy} on {location}.",
    }
    episode.apply("seat", "submit_report", report, view=app.view)
    assert episode.grade().total >= 0.9


def _seated_expert(family: str, seed: int, role: RoleSpec) -> Episode:
    """The scripted expert alone in one role's seat: what its view refuses comes back as a
    failed reply (as the server answers OUTSIDE_VIEW), what it allows is cut to the view."""
    episode = Episode.make(family, seed)
    owners = owners_of(episode.instance.spec)

    def call(tool: str, args: Mapping[str, Any]) -> ToolReply:
        why = refusal(role.view, get_tool(tool), args, owners)
        if why:
            return ToolReply(False, why, {}, False, "OUTSIDE_VIEW")
        result = episode.apply(role.name, tool, args, view=role.view)
        return ToolReply(result.ok, result.output.text, result.output.data, result.done, None)

    ExpertPolicy().play(call, observe(role.view, episode.observation()).to_dict())
    return episode


@pytest.mark.parametrize("family", [SPLIT, SCHEMA])
def test_the_expert_in_any_one_seat_resolves_nothing(family):
    """Seated with one role's view, the expert that solves every seed with the full view fixes
    none: the seat that sees the failure cannot act on its cause, the seat that can act does
    not see the failure."""
    for seed in SEEDS:
        for role in resolve(family).instance(seed).spec.roles:
            episode = _seated_expert(family, seed, role)
            grade = episode.grade()
            assert not grade.resolved and grade.total < 0.2, (seed, role.name, grade.total)


@pytest.mark.parametrize("family", [SPLIT, SCHEMA])
@pytest.mark.parametrize("seed", SEEDS)
def test_the_views_split_the_platform_and_nothing_shared_names_the_failing_service(family, seed):
    """The two views are complementary (every service is seen by exactly one seat), and the
    page and the roles' descriptions, which every seat reads, do not say which service fails:
    a seat that knows its teammate's view learns nothing of the failure from it."""
    spec = resolve(family).instance(seed).spec
    views = [set(r.view.services or ()) for r in spec.roles]
    assert not views[0] & views[1]
    assert views[0] | views[1] == {s.name for s in spec.services}
    shared = " ".join([spec.title, spec.description, *(r.description for r in spec.roles)])

    def named(name: str) -> bool:
        return re.search(rf"(?<![\w-]){re.escape(name)}(?![\w-])", shared) is not None

    for name in spec.ground_truth.symptom_services:
        assert not named(name), name
    root = spec.ground_truth.service
    # The root may be named only as one of a seat's services, all of them named alike.
    assert not named(root) or all(named(s) for v in views if root in v for s in v), root


@pytest.mark.parametrize("family", [SPLIT, SCHEMA])
def test_every_table_draws_a_root_and_its_roles_views_name_existing_services(family):
    entry = resolve(family)
    roots = set()
    for seed in range(100):
        spec = entry.instance(seed).spec
        names = {s.name for s in spec.services}
        roots.add(spec.ground_truth.location)
        for role in spec.roles:
            assert set(role.view.services or ()) <= names, (seed, role.name)
            assert spec.ground_truth.service not in role.view.services or role.name != "app-oncall"
    assert len(roots) >= 20
