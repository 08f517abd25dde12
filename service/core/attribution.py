"""How the team's reward is credited to each agent: SHARED, INDIVIDUAL, MIXED and DIFFERENCE.

With N seats, s_i the shaping reward agent i earned (the simulator's per-call reward without the
final grade: its own calls', plus repairs of what it broke that others' calls made), S = sum of
s_i and G the final team grade, each agent's episode total is:

- SHARED: S + G for every agent (everyone receives every reward).
- INDIVIDUAL: s_i + P_i/N + C_i. C_i is the agent's own costs in the grade (its operations the
  incident did not need, its hints, its share of code changed outside the root cause:
  `Episode.costs`), charged to it alone; P_i is the grade before costs of the episode as the
  agent's teammates played it less their own costly calls (operations they did not need,
  hints), so that no teammate's costs (their penalties, the minutes and steps they spent) reach
  it. With no costly calls, P_i is the grade before costs of the episode played, and the totals
  add up to S + G (unless the grade was clamped at 0).
- MIXED (team spirit alpha): (1 - alpha) * (s_i + G/N) + alpha * (S + G)/N. Adds up to S + G;
  alpha 1 gives everyone the team mean.
- DIFFERENCE: U_i - U_without_i, paid once at the end; no shaping. U_i is the unclamped grade
  (components summed, costs and all) of the episode without the teammates' costly calls, as
  for INDIVIDUAL, and U_without_i that of the same calls replayed without agent i's as well
  (`metasre.simulator.replay`, `without`): each teammate's edit leaves its file as it did in the
  episode played, less agent i's changes, reverted by content; a change a teammate built upon
  stays, since what cannot be told apart goes to the teammate. So an agent whose calls changed
  no behaviour (riders: comments, whitespace, renames, reorderings, rewrites of a fix's
  context) earns nothing, its own costs are its own (unclamped: a grade already at 0 does not
  absorb them), and no teammate's costs lower it. The totals need not add up to anything.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping, Sequence

from ...simulator import Episode, Grade
from ...simulator.catalog import Catalog
from ...simulator.replay import RecordedCall, replay


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


def unclamped(grade: Grade) -> float:
    """The grade's components summed, costs and all, before the total is clamped to [0, 1]."""
    return round(sum(c.value for c in grade.components), 9)


def before_costs(grade: Grade) -> float:
    """The grade's weighted components summed: what the team achieved, in [0, 1]."""
    return round(sum(c.value for c in grade.components if c.weight), 9)


def final_rewards(
    mode: Attribution,
    agents: Sequence[str],
    grade: float,
    credit: Mapping[str, Mapping[str, float]] | None = None,
) -> dict[str, dict[str, float]]:
    """Each agent's end-of-episode components; `credit` holds INDIVIDUAL's and DIFFERENCE's."""
    n = len(agents)
    if mode is Attribution.SHARED:
        return {a: {"grade": grade} for a in agents}
    if mode in (Attribution.DIFFERENCE, Attribution.INDIVIDUAL):
        assert credit is not None, f"{mode.value} needs the counterfactual credit"
        return {a: dict(credit[a]) for a in agents}
    # MIXED splits the grade evenly: (1-a)G/N + aG/N = G/N.
    return {a: {"grade": grade / n} for a in agents}


def credit(
    mode: Attribution,
    scenario_id: str,
    seed: int,
    calls: Sequence[RecordedCall],
    agents: Sequence[str],
    played: Grade,
    costs: Mapping[str, float],
    catalog: Catalog | None = None,
) -> dict[str, dict[str, float]]:
    """INDIVIDUAL's or DIFFERENCE's end-of-episode components of each agent (module docstring).

    Replays run only where they change something: an agent's teammates made costly calls
    (its episode without them), or, for DIFFERENCE, the agent made calls at all.

    Args:
        mode: INDIVIDUAL or DIFFERENCE.
        scenario_id: The episode's scenario.
        seed: The episode's seed.
        calls: The episode's applied calls, in order.
        agents: Every seat's agent id.
        played: The grade of the episode as played.
        costs: Each agent's own costs in the grade (`Episode.costs`).
        catalog: What the replays are made with (the process's by default).
    """
    n = len(agents)
    out: dict[str, dict[str, float]] = {}
    for agent in agents:
        mine = [c for c in calls if c.agent_id == agent or not c.costly]
        grade = played if len(mine) == len(calls) else _graded(scenario_id, seed, mine, catalog)
        if mode is Attribution.INDIVIDUAL:
            out[agent] = {"grade": round(before_costs(grade) / n, 9)}
            if costs.get(agent):
                out[agent]["own_costs"] = costs[agent]
            continue
        if not any(c.agent_id == agent for c in calls):
            out[agent] = {"team_grade": unclamped(grade), "counterfactual_grade": -unclamped(grade)}
            continue
        without = _graded(scenario_id, seed, mine, catalog, without=agent)
        out[agent] = {"team_grade": unclamped(grade), "counterfactual_grade": -unclamped(without)}
    return out


def _graded(
    scenario_id: str,
    seed: int,
    calls: Sequence[RecordedCall],
    catalog: Catalog | None,
    without: str | None = None,
) -> Grade:
    """The grade of a new episode of the scenario that `calls` were replayed on."""
    episode = Episode.make(scenario_id, seed, catalog=catalog)
    replay(episode, calls, without=without)
    return episode.grade()
