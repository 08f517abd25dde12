"""Builds the report: runs read, figures computed, one self-contained HTML page written.

The page holds everything it needs: plotly.js inlined (no network to open it), the figures as
Plotly JSON, and the trajectories for the viewer gzipped and base64-encoded (a browser's own
DecompressionStream unpacks them), so a report of a thousand episodes stays a few megabytes.
"""

from __future__ import annotations

import base64
import gzip
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from importlib import resources
from typing import Any

import jinja2
import orjson
import plotly.io
import plotly.offline

from ...service import SERVER_VERSION
from . import plots
from .episodes import EpisodeRow, config_of, row_of, viewer_record
from .sources import Run
from .summary import METRICS, TEAM_METRICS, ConfigSummary, pass_matrix, summarize


@dataclass(frozen=True, slots=True)
class Report:
    """A built report: the page and what it shows, for the command's summary line."""

    html: str
    episodes: int
    configs: int
    families: int


def _figure_json(fig: Any) -> str:
    """A figure as JSON that is safe inside a <script> element, whatever its labels hold.

    JSON has "<" only inside strings, where its escape (backslash u003c) means the same: so no
    `</script>` and no `<!--` can end or confuse the element (Plotly escapes them too; this
    does not rely on it).
    """
    text: str = plotly.io.to_json(fig, validate=False)
    return text.replace("<", "\\u003c")


def rows_of(runs: Sequence[Run]) -> tuple[list[EpisodeRow], list[Mapping[str, Any]]]:
    """Every episode's figures and its record.

    A configuration played in several runs is named after its run (`before: expert`), so that
    runs are compared rather than merged.
    """
    base = [[config_of(rec) for rec in run.episodes] for run in runs]
    in_runs: dict[str, set[str]] = {}
    for run, configs in zip(runs, base, strict=True):
        for c in configs:
            in_runs.setdefault(c, set()).add(run.label)
    rows, records = [], []
    for run, configs in zip(runs, base, strict=True):
        for record, c in zip(run.episodes, configs, strict=True):
            shown = f"{run.label}: {c}" if len(in_runs[c]) > 1 else c
            rows.append(row_of(run.label, record, shown))
            records.append(record)
    return rows, records


def comparison_of(runs: Sequence[Run], rows: Sequence[EpisodeRow]) -> dict[str, Any] | None:
    """The first two runs side by side: per family and instance, what changed."""
    runs = [r for r in runs if r.kind != "validate"]
    if len(runs) < 2:
        return None
    before, after = runs[0].label, runs[1].label
    prefix = {before: f"{before}: ", after: f"{after}: "}

    def base(r: EpisodeRow) -> str:
        return r.config.removeprefix(prefix[r.run])

    mine = [r for r in rows if r.run in prefix]
    shared = {base(r) for r in mine if r.run == before} & {base(r) for r in mine if r.run == after}
    # With a configuration in both runs, compare like with like; else the runs as wholes.
    keep = [r for r in mine if not shared or base(r) in shared]
    per_instance: dict[tuple[str, str, int], dict[str, list[EpisodeRow]]] = {}
    for r in keep:
        key = (base(r) if shared else "", r.family, r.seed)
        per_instance.setdefault(key, {}).setdefault(r.run, []).append(r)
    changed = []
    for (config, family, seed), by_run in sorted(per_instance.items()):
        if before not in by_run or after not in by_run:
            continue
        a = statistics.fmean(r.grade for r in by_run[before])
        b = statistics.fmean(r.grade for r in by_run[after])
        ra = statistics.fmean(r.resolved for r in by_run[before])
        rb = statistics.fmean(r.resolved for r in by_run[after])
        if ra != rb or abs(a - b) >= 0.05:
            changed.append(
                {
                    "config": config,
                    "family": family,
                    "seed": seed,
                    "before": round(a, 3),
                    "after": round(b, 3),
                    "resolved_before": ra,
                    "resolved_after": rb,
                    "key_before": by_run[before][0].key,
                    "key_after": by_run[after][0].key,
                }
            )
    families = list(dict.fromkeys(r.family for r in keep))
    per_family: dict[str, tuple[float | None, float | None]] = {}
    table = []
    for family in families:
        grades = [
            [r.grade for r in keep if r.family == family and r.run == run]
            for run in (before, after)
        ]
        solved = [
            [float(r.resolved) for r in keep if r.family == family and r.run == run]
            for run in (before, after)
        ]
        means = tuple(statistics.fmean(g) if g else None for g in grades)
        per_family[family] = (means[0], means[1])
        table.append(
            {
                "family": family,
                "grade": [None if m is None else round(m, 3) for m in means],
                "resolved": [statistics.fmean(s) if s else None for s in solved],
                "episodes": [len(g) for g in grades],
            }
        )
    return {
        "before": before,
        "after": after,
        "like_with_like": sorted(shared),
        "figure": _figure_json(plots.comparison(before, after, per_family)),
        "families": table,
        "changed": changed,
    }


def _verdicts(runs: Sequence[Run]) -> list[Mapping[str, Any]]:
    """Each family's latest verdict of `metasre validate`, in family order."""
    latest: dict[str, Mapping[str, Any]] = {}
    for run in runs:
        for verdict in run.validation:
            latest[str(verdict["scenario_id"])] = {**verdict, "run": run.label}
    return [latest[f] for f in sorted(latest)]


def _verdict_row(v: Mapping[str, Any]) -> dict[str, Any]:
    probes = v.get("probes_max") or {}
    worst = max(probes.items(), key=lambda p: p[1]) if probes else None
    alone = v.get("alone_resolved") or {}
    return {
        "family": str(v["scenario_id"]).removeprefix("meta-sre/"),
        "run": v["run"],
        "ok": bool(v["ok"]),
        "seeds": len(v.get("seeds") or ()),
        "reference_min": v.get("reference_min"),
        "expert_min": v.get("expert_min"),
        "expert_mean": v.get("expert_mean"),
        "random_mean": v.get("random_mean"),
        "wrong_fix_max": v.get("wrong_fix_max"),
        "worst_probe": None if worst is None else f"{worst[0]} {worst[1]:.2f}",
        "replayed": f"{v.get('replayed_resolved', 0)}/{v.get('replayed', 0)}",
        "sla_met": v.get("expert_sla_met"),
        "shallow": _shallow(v),
        "alone": ", ".join(f"{role} {rate:.2f}" for role, rate in alone.items()) or "-",
        "failures": list(v.get("failures") or ()),
    }


def _shallow(v: Mapping[str, Any]) -> str:
    """The shallow policies' figures of a verdict: `script 0.50, learner 0.12`, or `-`."""
    parts = []
    best = v.get("shallow_script_best")
    if isinstance(best, list | tuple) and len(best) == 2:
        parts.append(f"{best[0]} {float(best[1]):.2f}")
    if v.get("shallow_learner_mean") is not None:
        parts.append(f"learner {float(v['shallow_learner_mean']):.2f}")
    return ", ".join(parts) or "-"


def _estimate(e: Any) -> dict[str, Any] | None:
    return None if e is None else {"mean": e.mean, "low": e.low, "high": e.high, "n": e.seeds}


def _summary_rows(summaries: Sequence[ConfigSummary]) -> list[dict[str, Any]]:
    return [
        {
            "config": s.config,
            "runs": ", ".join(s.runs),
            "episodes": s.episodes,
            "instances": s.instances,
            "test_instances": s.test_instances,
            "families": s.families,
            "figures": {k: _estimate(v) for k, v in s.figures.items()},
            "components": {k: _estimate(v) for k, v in s.components.items()},
            "team": s.team,
            "attribution": s.attribution,
            "credit": {k: _estimate(v) for k, v in s.credit.items()},
            "teamwork": {k: _estimate(v) for k, v in s.teamwork.items()},
            "pass_at": s.pass_at,
            "pass_hat": s.pass_hat,
        }
        for s in summaries
    ]


def build_report(runs: Sequence[Run], *, title: str = "META-SRE results") -> Report:
    """The report page of `runs`' finished episodes.

    Raises:
        ValueError: no run has a finished episode.
    """
    rows, records = rows_of(runs)
    if not rows:
        raise ValueError(
            "no finished episode in " + ", ".join(str(r.path) for r in runs if r.kind != "validate")
            if any(r.kind != "validate" for r in runs)
            else "only validation verdicts given; add a trajectory store or an export"
        )
    configs = list(dict.fromkeys(r.config for r in rows))
    families = sorted({r.family for r in rows})
    summaries = [summarize(c, [r for r in rows if r.config == c]) for c in configs]
    cells = pass_matrix(rows)
    figures = {
        "headline": plots.headline(summaries),
        "components": plots.components(summaries),
        "matrix": plots.pass_matrix(cells, families, configs),
        "validity": plots.validity(rows, families, configs),
    }
    repeated = any(len(s.pass_at) > 1 for s in summaries)
    if repeated:
        figures["passk"] = plots.pass_curves(summaries)
    teams = [s for s in summaries if s.team]
    if teams:
        figures["credit"] = plots.credit(summaries)
    verdicts = _verdicts(runs)
    if verdicts:
        figures["checks"] = plots.validity_checks(verdicts)
    viewer = [viewer_record(row, record) for row, record in zip(rows, records, strict=True)]
    packed = base64.b64encode(gzip.compress(orjson.dumps(viewer), 6, mtime=0)).decode("ascii")
    template = _environment().get_template("report.html.j2")
    html = template.render(
        title=title,
        version=SERVER_VERSION,
        runs=[
            {
                "label": r.label,
                "path": str(r.path),
                "kind": r.kind,
                "size": f"{len(r.validation)} families"
                if r.kind == "validate"
                else f"{len(r.episodes)} episodes",
            }
            for r in runs
        ],
        episodes=len(rows),
        families=families,
        summaries=_summary_rows(summaries),
        metrics={k: v[0] for k, v in METRICS.items()},
        team_metrics={k: v[0] for k, v in TEAM_METRICS.items()},
        repeated=repeated,
        teams=bool(teams),
        figures={k: _figure_json(v) for k, v in figures.items()},
        comparison=comparison_of(runs, rows),
        verdicts=[_verdict_row(v) for v in verdicts],
        trajectories=packed,
        first_key=rows[0].key,
        plotly_js=plotly.offline.get_plotlyjs(),
        viewer_js=_asset("viewer.js"),
        style=_asset("report.css"),
    )
    return Report(html, len(rows), len(configs), len(families))


def _asset(name: str) -> str:
    return resources.files("metasre.cli.report").joinpath("templates", name).read_text("utf-8")


def _environment() -> jinja2.Environment:
    return jinja2.Environment(
        loader=jinja2.PackageLoader("metasre.cli.report", "templates"),
        autoescape=jinja2.select_autoescape(default=True),
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
