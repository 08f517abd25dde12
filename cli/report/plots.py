"""The report's figures, made with Plotly (its figure objects check every attribute we set).

Each function returns a figure; `page` embeds them as JSON that the inlined plotly.js draws. The
trajectory viewer's timeline is drawn in the page (`templates/viewer.js`), per chosen episode.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import plotly.graph_objects as go

from ...agents.experiment import Estimate
from .episodes import EpisodeRow
from .summary import Cell, ConfigSummary

HEADLINE = (("resolved", "resolved"), ("grade", "mean grade"), ("sla_met", "SLA met"))
FONT = "system-ui, -apple-system, Segoe UI, Roboto, sans-serif"


def _layout(fig: go.Figure, title: str, height: int = 380, **more: object) -> go.Figure:
    settings: dict[str, object] = {
        "margin": {"l": 60, "r": 20, "t": 50, "b": 60},
        "legend": {"orientation": "h", "y": -0.2},
        **more,
    }
    fig.update_layout(
        title={"text": title, "x": 0.01, "font": {"size": 15}},
        height=height,
        font={"family": FONT, "size": 12},
        template="plotly_white",
        **settings,
    )
    return fig


def shown(config: str) -> str:
    """A configuration's name as an axis label: one line per part (seats, policy, ...)."""
    return config.replace(" | ", "<br>")


def _error(estimates: Sequence[Estimate | None]) -> dict[str, object]:
    return {
        "type": "data",
        "symmetric": False,
        "array": [0.0 if e is None else e.high - e.mean for e in estimates],
        "arrayminus": [0.0 if e is None else e.mean - e.low for e in estimates],
    }


def headline(summaries: Sequence[ConfigSummary]) -> go.Figure:
    """Resolved rate, mean grade and SLA-met rate per configuration, with 95% intervals."""
    fig = go.Figure()
    names = [shown(s.config) for s in summaries]
    for key, title in HEADLINE:
        estimates = [s.figures.get(key) for s in summaries]
        fig.add_trace(
            go.Bar(
                name=title,
                y=names,
                x=[None if e is None else e.mean for e in estimates],
                error_x=_error(estimates),
                orientation="h",
                hovertemplate="%{y}<br>" + title + " %{x:.2f}<extra></extra>",
            )
        )
    return _layout(
        fig,
        "Resolved, grade and SLA met per configuration (95% bootstrap intervals over seeds)",
        height=130 + 75 * len(summaries),
        barmode="group",
        xaxis={"range": [0, 1.05]},
        yaxis={"autorange": "reversed"},
        margin={"l": 230, "r": 20, "t": 50, "b": 40},
    )


def components(summaries: Sequence[ConfigSummary]) -> go.Figure:
    """Mean score of each grade component per configuration."""
    names = list(dict.fromkeys(n for s in summaries for n in s.components))
    z = [
        [None if (e := s.components.get(n)) is None else round(e.mean, 3) for n in names]
        for s in summaries
    ]
    fig = go.Figure(
        go.Heatmap(
            z=z,
            x=names,
            y=[shown(s.config) for s in summaries],
            zmin=0,
            zmax=1,
            colorscale="RdYlGn",
            text=[["" if v is None else f"{v:.2f}" for v in row] for row in z],
            texttemplate="%{text}",
            hovertemplate="%{y}<br>%{x}: %{z:.2f}<extra></extra>",
        )
    )
    return _layout(
        fig,
        "Grade components: mean score per configuration",
        height=140 + 50 * len(summaries),
        yaxis={"autorange": "reversed"},
        margin={"l": 230, "r": 20, "t": 50, "b": 40},
    )


def pass_matrix(
    cells: Mapping[tuple[str, str], Cell], families: Sequence[str], configs: Sequence[str]
) -> go.Figure:
    """Families x configurations: the share of episodes resolved; hover lists the seeds."""
    z: list[list[float | None]] = []
    text: list[list[str]] = []
    hover: list[list[str]] = []
    for family in families:
        zr: list[float | None] = []
        tr: list[str] = []
        hr: list[str] = []
        for config in configs:
            cell = cells.get((family, config))
            if cell is None:
                zr.append(None)
                tr.append("")
                hr.append("not played")
                continue
            zr.append(cell.resolved / cell.episodes)
            tr.append(f"{cell.resolved}/{cell.episodes}")
            seeds = ", ".join(
                f"{seed}{' (test)' if test else ''} {'pass' if ok else 'fail'} {grade:.2f}"
                for seed, ok, grade, test in cell.seeds
            )
            hr.append(f"mean grade {cell.grade:.2f}<br>seeds: {seeds}")
        z.append(zr)
        text.append(tr)
        hover.append(hr)
    fig = go.Figure(
        go.Heatmap(
            z=z,
            x=[shown(c) for c in configs],
            y=[f.removeprefix("meta-sre/") for f in families],
            zmin=0,
            zmax=1,
            colorscale=[[0, "#d73027"], [0.5, "#fee08b"], [1, "#1a9850"]],
            text=text,
            texttemplate="%{text}",
            customdata=hover,
            hovertemplate="%{y} | %{x}<br>resolved %{text}<br>%{customdata}<extra></extra>",
            colorbar={"title": {"text": "resolved"}},
        )
    )
    return _layout(
        fig,
        "Pass matrix: families x configurations (resolved / episodes; hover for seeds)",
        height=200 + 32 * len(families),
        yaxis={"autorange": "reversed"},
        xaxis={"side": "top", "tickangle": 0},
        margin={"l": 180, "r": 20, "t": 110, "b": 20},
    )


def pass_curves(summaries: Sequence[ConfigSummary]) -> go.Figure:
    """pass@k and pass^k against k, per configuration with repetitions."""
    fig = go.Figure()
    for s in summaries:
        if len(s.pass_at) < 2:
            continue
        ks = sorted(s.pass_at)
        fig.add_trace(go.Scatter(x=ks, y=[s.pass_at[k] for k in ks], name=f"{s.config} pass@k"))
        fig.add_trace(
            go.Scatter(
                x=ks,
                y=[s.pass_hat[k] for k in ks],
                name=f"{s.config} pass^k",
                line={"dash": "dot"},
            )
        )
    return _layout(
        fig,
        "pass@k (some try of k resolves) and pass^k (every try of k resolves)",
        xaxis={"title": {"text": "k (tries of the same incident)"}, "dtick": 1},
        yaxis={"range": [0, 1.05]},
    )


def credit(summaries: Sequence[ConfigSummary]) -> go.Figure:
    """Each seat's credit per team configuration, under the configuration's attribution."""
    fig = go.Figure()
    for s in summaries:
        if not s.team:
            continue
        seats = list(s.credit)
        estimates = [s.credit[seat] for seat in seats]
        fig.add_trace(
            go.Bar(
                name=f"{s.config} ({s.attribution})",
                x=seats,
                y=[None if e is None else e.mean for e in estimates],
                # no <extra>: the hover box names the trace (configuration and attribution)
                hovertemplate="%{x}: %{y:.2f}",
                error_y=_error(estimates),
            )
        )
    return _layout(fig, "Credit per seat (reward over the episode, 95% intervals)", barmode="group")


def validity(
    rows: Sequence[EpisodeRow], families: Sequence[str], configs: Sequence[str]
) -> go.Figure:
    """Grade distributions per family and configuration: do the grades tell agents apart?"""
    fig = go.Figure()
    for config in configs:
        mine = [r for r in rows if r.config == config]
        fig.add_trace(
            go.Box(
                name=config,
                x=[r.family.removeprefix("meta-sre/") for r in mine],
                y=[r.grade for r in mine],
                boxpoints="all",
                jitter=0.4,
                pointpos=0,
                customdata=[r.seed for r in mine],
                hovertemplate="%{x} seed %{customdata}<br>grade %{y:.2f}",
            )
        )
    return _layout(
        fig,
        "Validity: the grade distribution of each configuration, family by family",
        height=420,
        boxmode="group",
        yaxis={"range": [-0.05, 1.05], "title": {"text": "grade"}},
        xaxis={
            "categoryorder": "array",
            "categoryarray": [f.removeprefix("meta-sre/") for f in families],
        },
    )


def comparison(
    before: str, after: str, per_family: Mapping[str, tuple[float | None, float | None]]
) -> go.Figure:
    """Mean grade per family in two runs."""
    families = list(per_family)
    fig = go.Figure()
    for i, name in enumerate((before, after)):
        fig.add_trace(
            go.Bar(
                name=name,
                x=[f.removeprefix("meta-sre/") for f in families],
                y=[per_family[f][i] for f in families],
            )
        )
    return _layout(
        fig,
        f"Mean grade per family: {before} vs {after}",
        barmode="group",
        yaxis={"range": [0, 1.05]},
    )


CHECKS = (
    ("reference_min", "reference solution (min)", "star", "#2ca02c"),
    ("expert_min", "expert (min)", "triangle-up", "#1f77b4"),
    ("expert_mean", "expert (mean)", "circle", "#1f77b4"),
    ("wrong_fix_max", "plausible wrong fix (max)", "x", "#ff7f0e"),
    ("random_mean", "random agent (mean)", "square", "#d62728"),
)
"""The grades `metasre validate` reports per family: (key, name, marker, colour)."""
EXPERT_FLOOR = 0.9
RANDOM_CEILING = 0.05


def validity_checks(verdicts: Sequence[Mapping[str, object]]) -> go.Figure:
    """Per family, what `metasre validate` measured: the grades of each check and probe.

    The reference solution, the expert, the wrong fix, the random agent, and each
    reward-hacking or shallow probe.
    """
    families = [str(v["scenario_id"]).removeprefix("meta-sre/") for v in verdicts]
    fig = go.Figure()
    for key, name, symbol, colour in CHECKS:
        fig.add_trace(
            go.Scatter(
                x=families,
                y=[v.get(key) for v in verdicts],
                name=name,
                mode="markers",
                marker={"symbol": symbol, "size": 12, "color": colour},
                hovertemplate="%{x}<br>" + name + " %{y:.2f}<extra></extra>",
            )
        )
    xs: list[str] = []
    ys: list[float] = []
    names: list[str] = []
    for family, verdict in zip(families, verdicts, strict=True):
        probes = verdict.get("probes_max")
        for probe, grade in (probes if isinstance(probes, dict) else {}).items():
            xs.append(family)
            ys.append(float(grade))
            names.append(str(probe))
    fig.add_trace(
        go.Scatter(
            x=xs,
            y=ys,
            customdata=names,
            name="reward-hacking and shallow probes (max each)",
            mode="markers",
            marker={"symbol": "diamond-open", "size": 10, "color": "#9467bd"},
            hovertemplate="%{x}<br>%{customdata} %{y:.2f}<extra></extra>",
        )
    )
    # The shallow policies (validate --shallow-seeds): scripts that act on the opening alone,
    # and a learner fitted on training seeds, played on test seeds.
    best = [v.get("shallow_script_best") for v in verdicts]
    if any(isinstance(b, list | tuple) and len(b) == 2 for b in best):
        fig.add_trace(
            go.Scatter(
                x=families,
                y=[b[1] if isinstance(b, list | tuple) else None for b in best],
                customdata=[b[0] if isinstance(b, list | tuple) else "" for b in best],
                name="best shallow script (mean, test seeds)",
                mode="markers",
                marker={"symbol": "triangle-down-open", "size": 12, "color": "#8c564b"},
                hovertemplate="%{x}<br>%{customdata} %{y:.2f}<extra></extra>",
            )
        )
    learner = [v.get("shallow_learner_mean") for v in verdicts]
    if any(x is not None for x in learner):
        fig.add_trace(
            go.Scatter(
                x=families,
                y=learner,
                name="shallow learner (mean, test seeds)",
                mode="markers",
                marker={"symbol": "hexagon-open", "size": 12, "color": "#e377c2"},
                hovertemplate="%{x}<br>shallow learner %{y:.2f}<extra></extra>",
            )
        )
    for level, text in ((EXPERT_FLOOR, "expert floor 0.9"), (RANDOM_CEILING, "random ceiling")):
        fig.add_hline(
            y=level,
            line={"dash": "dot", "color": "#888", "width": 1},
            annotation_text=text,
            annotation_position="right",
        )
    return _layout(
        fig,
        "Validity checks (metasre validate): grades per family",
        height=440,
        yaxis={"range": [-0.05, 1.05], "title": {"text": "grade"}},
        margin={"l": 60, "r": 110, "t": 50, "b": 60},
    )
