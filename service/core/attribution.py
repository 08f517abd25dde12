"""How the team's reward is credited to each agent: SHARED, INDIVIDUAL, MIXED and DIFFERENCE.

With N seats, s_i the shaping reward agent i earned (the simulator's per-call reward without the
final grade: its own calls', plus repairs of what it broke that others' calls made), S = sum of
s_i and G the final team grade, each agent's episode total is:

- SHARED: S + G for every agent (everyone receives every reward).
- INDIVIDUAL: s_i + G/N. The agents' totals add up to S + G.
- MIXED (team spirit alpha): (1 - alpha) * (s_i + G/N) + alpha * (S + G)/N. Adds up to S + G;
  alpha 0 is INDIVIDUAL, alpha 1 gives everyone the team mean.
- DIFFERENCE: G - G_without_i, where G_without_i is the grade of the same episode replayed without
  agent i's calls, paid once at the end; no shaping. The others' edits are replayed by content
  (`metasre.simulator.replay`): where their context still is, like a patch, so that a rider's
  insertions above a teammate's fix do not make the fix miss. An agent whose calls changed
  nothing gets exactly 0. The totals need not add up to anything.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping, Sequence

from metasre.simulator import Episode
from metasre.simulator.replay import RecordedCall, replay
from metasre.simulator.sandbox import TestRunner


class RewardMode(enum.Enum):
    """When shaping is paid: as each call applies, or never (the grade only, at the end)."""

    DENSE = "dense"
    SPARSE = "sparse"


class Attribution(enum.Enum):
    """The attribution modes."""

    SHARED = "shared"
    INDIVIDUAL = "individual"
    MIXED = "mixed"
    DIFFERENCE = "difference"


def _scaled(components: Mapping[str, float], factor: float) -> dict[str, float]:
    return {k: v * factor for k, v in components.items()}


def step_rewards(
    mode: Attribution,
    alpha: float,
    agents: Sequence[str],
    earned: Mapping[str, Mapping[str, float]],
    reward_mode: RewardMode = RewardMode.DENSE,
) -> dict[str, dict[str, float]]:
    """Each agent's share of one call's shaping (agents with no share are absent).

    Args:
        mode: The session's attribution mode.
        alpha: Team spirit, for MIXED.
        agents: Every seat's agent id.
        earned: The shaping components each agent earned on this call: the caller's own,
            and another's when the call repaid what that agent broke (see rewards.Shaper).
        reward_mode: SPARSE pays no shaping at all.
    """
    n = len(agents)
    if mode is Attribution.DIFFERENCE or reward_mode is RewardMode.SPARSE:
        return {}
    if mode is Attribution.INDIVIDUAL:
        return {a: dict(c) for a, c in earned.items() if c}
    team: dict[str, float] = {}
    for components in earned.values():
        for name, value in components.items():
            team[name] = team.get(name, 0.0) + value
    if mode is Attribution.SHARED:
        return {a: dict(team) for a in agents}
    # MIXED: (1 - alpha) of what each earned, plus alpha/N of what the team earned
    out = {a: _scaled(team, alpha / n) for a in agents if alpha > 0}
    for agent, components in earned.items():
        own = out.setdefault(agent, {})
        for name, value in components.items():
            own[name] = own.get(name, 0.0) + value * (1 - alpha)
    return out


def final_rewards(
    mode: Attribution,
    agents: Sequence[str],
    grade: float,
    without: Mapping[str, float] | None = None,
) -> dict[str, dict[str, float]]:
    """Each agent's end-of-episode components; `without` holds G_without_i for DIFFERENCE."""
    n = len(agents)
    if mode is Attribution.SHARED:
        return {a: {"grade": grade} for a in agents}
    if mode is Attribution.DIFFERENCE:
        assert without is not None, "DIFFERENCE needs the counterfactual grades"
        return {a: {"team_grade": grade, "counterfactual_grade": -without[a]} for a in agents}
    # INDIVIDUAL and MIXED both split the grade evenly: (1-a)G/N + aG/N = G/N.
    return {a: {"grade": grade / n} for a in agents}


def counterfactual_grades(
    scenario_id: str,
    seed: int,
    calls: Sequence[RecordedCall],
    agents: Sequence[str],
    team_grade: float,
    runner: TestRunner | None = None,
) -> dict[str, float]:
    """G_without_i for each agent: the episode replayed without that agent's calls.

    An agent with no calls needs no replay: its counterfactual is the episode itself.
    """
    out: dict[str, float] = {}
    for agent in agents:
        kept = [c for c in calls if c.agent_id != agent]
        if len(kept) == len(calls):
            out[agent] = team_grade
            continue
        episode = Episode.make(scenario_id, seed, runner)
        # by content: the others' edits go where their context is, so an agent's harmless
        # insertions cannot make a teammate's fix miss in the counterfactual
        replay(episode, kept, by_content=True)
        out[agent] = episode.grade().total
    return out
