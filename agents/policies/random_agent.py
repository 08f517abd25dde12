"""The random baseline: plausible-looking calls chosen by a seeded coin, then a random report."""

from __future__ import annotations

import random
from collections.abc import Iterable, Mapping
from typing import Any

from .base import ToolCaller, choices

_TOOLS = (
    "view_file",
    "list_files",
    "edit_lines",
    "read_logs",
    "query_metrics",
    "get_alerts",
    "check_dependencies",
    "describe_service",
    "run_tests",
    "git_log",
    "git_blame",
    "git_diff",
    "rollback_migration",
    "rollback_deployment",
    "restart_service",
    "scale_service",
    "send_message",
    "get_config",
    "set_config",
    "rollback_config",
    "set_feature_flag",
    "renew_certificate",
    "sync_clock",
    "clean_disk",
    "skip_message",
    "warm_cache",
)
_METRICS = ("cpu", "memory", "error_rate", "p99_ms", "queue_depth", "business")
_SUITES = ("unit", "integration", "load", "security")


class RandomPolicy:
    """Uniform over tools, with arguments drawn from what the observation shows.

    `tools`: the server's tools as ListTools serves them; the report is drawn from their
    published categories and remediations.
    """

    def __init__(self, seed: int, tools: Iterable[Mapping[str, Any]], max_calls: int = 15) -> None:
        self.rng = random.Random(seed)
        self.max_calls = max_calls
        tools = list(tools)
        self.categories = choices(tools, "submit_report", "category")
        self.remediations = choices(tools, "submit_report", "remediation")
        self.knobs: dict[str, list[Any]] = {"keys": [], "flags": [], "certs": [], "queues": []}
        """Names the get_config replies showed: (service, key, value), flags, (service, cert),
        queues; the knob operations draw from them (a made-up name where none was seen)."""

    def play(self, call: ToolCaller, observation: Mapping[str, Any]) -> None:
        """Make random calls, then file a random report."""
        rng = self.rng
        services = [str(s["name"]) for s in observation.get("services", ())] or ["unknown"]
        files: list[str] = []
        listing = call("list_files", {"path": ""})
        for entry in listing.data.get("entries", ()):
            if not str(entry).endswith("/"):
                files.append(str(entry))
        for folder in [e for e in listing.data.get("entries", ()) if str(e).endswith("/")][:4]:
            sub = call("list_files", {"path": str(folder)})
            files += [
                f"{folder}{e}" for e in sub.data.get("entries", ()) if not str(e).endswith("/")
            ]
        files = files or ["README.md"]
        for _ in range(rng.randint(1, self.max_calls)):
            tool = rng.choice(_TOOLS)
            reply = call(tool, self._args(tool, services, files))
            if reply.done:
                return
            if tool == "get_config" and reply.ok:
                self._remember(reply.data)
        call(
            "submit_report",
            {
                "root_cause_service": rng.choice(services),
                "root_cause_location": rng.choice(files),
                "category": rng.choice(self.categories),
                "remediation": rng.choice(self.remediations),
                "summary": "Random baseline report: no investigation was done.",
            },
        )

    def _args(self, tool: str, services: list[str], files: list[str]) -> dict[str, Any]:
        rng = self.rng
        service = rng.choice(services)
        line = rng.randint(1, 40)
        table: dict[str, dict[str, Any]] = {
            "view_file": {"path": rng.choice(files)},
            "list_files": {"path": ""},
            "edit_lines": {
                "path": rng.choice(files),
                "action": rng.choice(("replace", "delete")),
                "start_line": line,
                "end_line": line,
                "content": "pass" if rng.random() < 0.5 else "",
            },
            "read_logs": {"service": service},
            "query_metrics": {"service": service, "metric": rng.choice(_METRICS)},
            "get_alerts": {},
            "check_dependencies": {},
            "describe_service": {"service": service},
            "run_tests": {"suite": rng.choice(_SUITES)},
            "git_log": {},
            "git_blame": {"path": rng.choice(files)},
            "git_diff": {},
            "rollback_migration": {"service": service, "migration": "0001_initial"},
            "rollback_deployment": {"service": service},
            "restart_service": {"service": service},
            "scale_service": {"service": service, "replicas": rng.randint(1, 8)},
            "send_message": {"text": "random"},
            "get_config": {"service": service},
            "rollback_config": {"service": service},
            "sync_clock": {"service": service},
            "clean_disk": {"service": service},
            "warm_cache": {"service": service},
        }
        if tool in table:
            return table[tool]
        seen = self.knobs
        if tool == "set_config":
            owner, key, value = rng.choice(seen["keys"] or [(service, "log_level", "INFO")])
            return {"service": owner, "key": key, "value": value}
        if tool == "set_feature_flag":
            flag = rng.choice(seen["flags"] or ["new_feature"])
            return {"flag": flag, "rollout_percent": rng.choice((0, 50, 100))}
        if tool == "renew_certificate":
            owner, cert = rng.choice(seen["certs"] or [(service, "ingress")])
            return {"service": owner, "certificate": cert}
        return {"queue": rng.choice(seen["queues"] or ["orders"])}  # skip_message

    def _remember(self, data: Mapping[str, Any]) -> None:
        service = str(data.get("service", ""))
        config = data.get("config") or {}
        # A value it already has, or another key's: blind, like the rest of this baseline.
        values = list(config.values())
        self.knobs["keys"] += [(service, k, self.rng.choice(values)) for k in config]
        self.knobs["flags"] += [str(f["name"]) for f in data.get("flags", ())]
        self.knobs["certs"] += [(service, str(c["name"])) for c in data.get("certificates", ())]
        self.knobs["queues"] += [str(q["name"]) for q in data.get("queues", ())]


__all__ = [
    "RandomPolicy",
]
