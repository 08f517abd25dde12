"""Teamwork figures from a trajectory: what each counts, on logs written out by hand."""

from metasre.agents.teamwork import teamwork

LOOKS = ("read_logs", "get_alerts", "describe_service")


def applied(tick, agent, tool, args=None, clock=0.0):
    return {
        "tick": tick,
        "applied": {
            "tick": tick,
            "agent_id": agent,
            "tool": tool,
            "args": args or {},
            "clock": clock,
        },
    }


def ended(detail="mitigated at t+7.5 of 30 min", rewards=None):
    return {
        "ended": {
            "grade": {
                "total": 0.9,
                "resolved": True,
                "components": [{"name": "sla", "score": 1.0, "detail": detail}],
            },
            "agent_rewards": rewards or {"a": 0.5, "b": 0.4, "c": 0.0},
        }
    }


def test_redundant_looks_are_the_same_look_by_another_seat():
    log = [
        applied(1, "a", "read_logs", {"service": "x"}),
        applied(2, "a", "read_logs", {"service": "x"}),  # the same seat again: not redundant
        applied(3, "b", "read_logs", {"service": "x"}),  # another seat: redundant
        applied(4, "b", "read_logs", {"service": "y"}),
        applied(5, "c", "edit_lines", {"path": "p"}),  # not a look
        applied(6, "a", "edit_lines", {"path": "p"}),
        ended(),
    ]
    t = teamwork(log, sla_minutes=30, look_tools=LOOKS)
    assert t.redundant_looks == 1
    assert t.steps == 6 and t.steps_by_seat == {"a": 3, "b": 2, "c": 1}
    assert t.mitigated_at == 7.5 and t.sla_met and t.resolved and t.ended


def test_messages_count_deliveries_and_a_broadcast_reaches_everyone_else():
    log = [
        {"message": {"from_agent_id": "a", "to": ["b"], "text": "1"}},
        {"message": {"from_agent_id": "a", "to": ["b", "c"], "text": "2"}},
        {"message": {"from_agent_id": "b", "to": ["*"], "text": "3"}},
        ended(),
    ]
    t = teamwork(log, sla_minutes=30, look_tools=LOOKS, seats=("a", "b", "c"))
    assert t.messages_sent == 3 and t.messages_received == 1 + 2 + 2


def test_idle_turns_under_each_policy():
    rounds = [
        {"turn": {"round": 1}},
        applied(1, "a", "get_alerts"),
        applied(2, "b", "get_alerts"),
        {"turn": {"round": 2}},
        applied(3, "a", "get_alerts"),
        {"turn": {"round": 3}},
        ended(),
    ]
    t = teamwork(rounds, sla_minutes=30, look_tools=LOOKS, seats=("a", "b", "c"))
    assert t.idle_turns == 1 + 2 + 3
    turns = [
        {"turn": {"agent_id": "a"}},
        applied(1, "a", "get_alerts"),
        {"turn": {"agent_id": "b"}},
        {"turn": {"agent_id": "c"}},
        applied(2, "c", "get_alerts"),
        ended(),
    ]
    assert teamwork(turns, sla_minutes=30, look_tools=LOOKS).idle_turns == 1
    free = [applied(1, "a", "get_alerts"), ended()]
    assert teamwork(free, sla_minutes=30, look_tools=LOOKS).idle_turns == 0


def test_an_unmitigated_or_cut_short_episode_says_so():
    late = teamwork(
        [applied(1, "a", "get_alerts"), ended("mitigated at t+45.0 of 30 min")],
        sla_minutes=30,
        look_tools=LOOKS,
    )
    assert late.mitigated_at == 45.0 and not late.sla_met
    never = teamwork([ended("not mitigated")], sla_minutes=30, look_tools=LOOKS)
    assert never.mitigated_at is None and not never.sla_met
    cut = teamwork([applied(1, "a", "get_alerts", clock=2.5)], sla_minutes=30, look_tools=LOOKS)
    assert not cut.ended and cut.grade == 0.0 and cut.minutes == 2.5 and cut.credit == {}
