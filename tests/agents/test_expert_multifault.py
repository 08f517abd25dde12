"""The expert on incidents of several faults, and in a seat whose view hides part of one.

After a remedy it looks again and treats what still fails unexplained as another fault; it
reports the fault behind the page's first alert. In a restricted seat it skips what the view
refuses, whether the refusal comes back as a failed reply (in process) or as the wire client's
ClientError (a real server), and fixes what its view reaches.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import Any

import pytest

from metasre.agents import ClientError, ConnectionLostError, EpisodeOverError
from metasre.agents.policies import ExpertPolicy, ToolReply
from metasre.agents.policies.expert import tolerant
from metasre.agents.sync import SyncClient
from metasre.conformance import EpisodeCaller
from metasre.simulator import Episode
from metasre.simulator.tools import get_tool
from metasre.simulator.views import View, owners_of, refusal

TWIN = "meta-sre/twin-faults-v2"
PARALLEL = "meta-sre/parallel-sla-v2"
SEEDS = (0, 3, 11, 24, 37, 58, 79, 96)


def _play(family: str, seed: int, observation: Mapping[str, Any] | None = None):
    episode = Episode.make(family, seed)
    expert = ExpertPolicy()
    expert.play(EpisodeCaller(episode), observation or episode.observation().to_dict())
    return episode, expert


@pytest.mark.parametrize("family", [TWIN, PARALLEL])
def test_the_expert_cures_every_fault_and_reports_the_primary(family):
    for seed in SEEDS:
        episode, expert = _play(family, seed)
        truth = episode.instance.spec.ground_truth
        roots = {truth.service, *(f.service for f in truth.further_faults)}
        assert {d.service for d in expert.diagnoses} == roots, seed
        assert expert.diagnosis is not None and expert.diagnosis.service == truth.service
        grade = episode.grade()
        assert grade.resolved, (seed, grade.fail_to_pass)
        assert grade.component("root_cause").score == 1.0
        assert grade.component("report").score == 1.0
        assert not [c for c in grade.components if c.name == "unneeded_operations"]


def test_the_report_names_the_fault_behind_the_first_page_even_when_found_second():
    for seed in SEEDS:
        episode = Episode.make(TWIN, seed)
        truth = episode.instance.spec.ground_truth
        second = truth.further_faults[0].service
        # The terminal names the P2 fault's service first: that is where the expert starts.
        observation = episode.observation().to_dict()
        observation["terminal"] = [f"on-call note: {second} looked wrong earlier"]
        expert = ExpertPolicy()
        expert.play(EpisodeCaller(episode), observation)
        assert [d.service for d in expert.diagnoses] == [second, truth.service], seed
        assert expert.diagnosis is expert.diagnoses[1]
        grade = episode.grade()
        assert grade.resolved and grade.component("root_cause").score == 1.0, seed


@pytest.mark.parametrize(
    "family",
    ["meta-sre/payment-bad-deploy-v2", "meta-sre/bad-config-push-v1", "meta-sre/slow-query-v4"],
)
def test_a_single_fault_gets_one_diagnosis_and_one_remedy(family):
    for seed in range(5):
        episode, expert = _play(family, seed)
        assert len(expert.diagnoses) == 1, (seed, [d.service for d in expert.diagnoses])
        assert episode.grade().total >= 0.9, seed


class ViewCaller:
    """A seat with a view in process: refused calls never reach the episode.

    `raising`: a refusal raises ClientError as the wire client does; else it comes back as a
    failed reply.
    """

    def __init__(self, episode: Episode, view: View, raising: bool) -> None:
        self.episode = episode
        self.view = view
        self.raising = raising
        self.owners = owners_of(episode.instance.spec)
        self.refused: list[str] = []

    def __call__(self, tool: str, args: Mapping[str, Any]) -> ToolReply:
        why = refusal(self.view, get_tool(tool), args, self.owners)
        if why:
            self.refused.append(tool)
            if self.raising:
                raise ClientError(why, code="FAILED_PRECONDITION", reason="OUTSIDE_VIEW")
            return ToolReply(False, why, {}, False, "OUTSIDE_VIEW")
        step = self.episode.apply("seat", tool, args, view=self.view)
        out = step.output
        return ToolReply(step.ok, out.text, out.data, step.done, out.error)


def _checks_of(episode: Episode, service: str) -> dict[str, bool]:
    grade = episode.grade()
    return {k: v for k, v in grade.fail_to_pass.items() if service in k}


@pytest.mark.parametrize("raising", [False, True])
def test_a_seat_with_one_roles_view_fixes_its_half_and_skips_the_rest(raising):
    for seed in SEEDS[:4]:
        for role, mine in (("commerce-oncall", 0), ("platform-oncall", 1)):
            episode = Episode.make(TWIN, seed)
            spec = episode.instance.spec
            view = next(r.view for r in spec.roles if r.name == role)
            faults = [spec.ground_truth, *spec.ground_truth.further_faults]
            caller = ViewCaller(episode, view, raising)
            ExpertPolicy().play(caller, episode.observation().to_dict())
            assert episode.phase.value == "terminated", (seed, role)
            own, other = faults[mine].service, faults[1 - mine].service
            assert all(_checks_of(episode, own).values()), (seed, role, episode.grade())
            assert not any(_checks_of(episode, other).values()), (seed, role)
            assert not episode.grade().resolved


def test_the_commanders_edge_view_neither_crashes_nor_changes_anything():
    episode = Episode.make(TWIN, 5)
    view = next(r.view for r in episode.instance.spec.roles if r.name == "incident-commander")
    caller = ViewCaller(episode, view, raising=True)
    ExpertPolicy().play(caller, episode.observation().to_dict())
    assert episode.phase.value == "terminated"
    assert not episode.grade().resolved


def test_tolerant_turns_refusals_into_replies_and_lets_a_lost_connection_through():
    def refuse(tool: str, args: Mapping[str, Any]) -> ToolReply:
        raise ClientError("outside", code="FAILED_PRECONDITION", reason="OUTSIDE_VIEW")

    def over(tool: str, args: Mapping[str, Any]) -> ToolReply:
        raise EpisodeOverError("over", code="FAILED_PRECONDITION", reason="EPISODE_OVER")

    def lost(tool: str, args: Mapping[str, Any]) -> ToolReply:
        raise ConnectionLostError("gone", code="UNAVAILABLE")

    reply = tolerant(refuse)("read_logs", {"service": "x"})
    assert (reply.ok, reply.done, reply.error) == (False, False, "OUTSIDE_VIEW")
    reply = tolerant(over)("get_alerts", {})
    assert (reply.ok, reply.done, reply.error) == (False, True, "EPISODE_OVER")
    with pytest.raises(ConnectionLostError):
        tolerant(lost)("get_alerts", {})


def _wire_play(address: str, seat: Mapping[str, Any], seed: int) -> tuple[dict[str, Any], int]:
    """The expert alone in one seat over the wire, its refusals raised as ClientError."""
    refused = 0
    with SyncClient(address) as client:
        session = client.create_session(TWIN, seed=seed, seats=[seat])
        agent = client.agent(session.id, session.tokens[seat["agent_id"]])

        def call(tool: str, args: Mapping[str, Any]) -> ToolReply:
            nonlocal refused
            try:
                r = agent.call(tool, dict(args))
            except ClientError as exc:
                refused += exc.reason == "OUTSIDE_VIEW"
                raise
            return ToolReply(r.ok, r.text, r.data, r.done, r.error_code or None)

        try:
            ExpertPolicy().play(call, agent.observation)
        finally:
            agent.close()
        return client.get_grade(session.id), refused


def _split(grade: Mapping[str, Any], service: str) -> list[bool]:
    return [bool(v) for k, v in grade["grade"]["fail_to_pass"].items() if service in k]


async def test_over_the_wire_a_roles_seat_fixes_what_its_view_reaches(server):
    seat = {"agent_id": "commerce-oncall", "role": "commerce-oncall"}
    grade, _ = await asyncio.to_thread(_wire_play, server.address, seat, 2)
    truth = Episode.make(TWIN, 2).instance.spec.ground_truth
    assert all(_split(grade, truth.service))
    assert not any(_split(grade, truth.further_faults[0].service))
    assert grade["grade"]["final"]


async def test_over_the_wire_a_refused_remedy_raises_and_the_expert_goes_on(server):
    # Every service but no deploy system: the release's rollback is refused (OUTSIDE_VIEW,
    # raised by the client); the expert goes on to the other fault and files its report.
    seat = {"agent_id": "sre", "view": {"deploys": False}}
    grade, refused = await asyncio.to_thread(_wire_play, server.address, seat, 2)
    truth = Episode.make(TWIN, 2).instance.spec.ground_truth
    assert refused >= 1
    assert not all(_split(grade, truth.service))
    assert all(_split(grade, truth.further_faults[0].service))
    assert grade["grade"]["final"]


def test_without_check_dependencies_the_expert_reads_the_graph_off_the_dashboard():
    # A role whose tools leave out check_dependencies: the server refuses it (raised here).
    episode = Episode.make(TWIN, 8)
    inner = EpisodeCaller(episode)
    refused: list[str] = []

    def call(tool: str, args: Mapping[str, Any]) -> ToolReply:
        if tool == "check_dependencies":
            refused.append(tool)
            raise ClientError("not among this seat's tools", code="PERMISSION_DENIED")
        return inner(tool, args)

    expert = ExpertPolicy()
    expert.play(call, episode.observation().to_dict())
    assert refused and len(expert.diagnoses) == 2
    assert episode.grade().resolved
