"""The blocking client as the README documents it, run against a real server (issue 28, item 13).

The README's `SyncClient` block is run as pasted (its target swapped for the test server's) in
a fresh interpreter: create, call, list, get, reset, report, grade, close. And everything the
SDK hands back reads the same way: an observation and a call's result are both mappings keyed
by the proto's field names.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path

from metasre.agents import CallResult, SyncClient
from metasre.v1 import agent_pb2

ROOT = Path(__file__).resolve().parents[2]
MARKER = "<!-- tests/agents/test_readme_sync_client.py runs this block against a real server -->"


def readme_block() -> str:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    after = text.split(MARKER, 1)[1]
    return after.split("```python\n", 1)[1].split("```", 1)[0]


async def test_the_readmes_blocking_client_runs_as_pasted(server):
    code = readme_block().replace("127.0.0.1:50051", server.address)
    assert server.address in code
    out = await asyncio.to_thread(
        subprocess.run,
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[1].startswith("True ")  # get_alerts worked; its reward and steps left follow
    session_ids = json.loads(lines[2].replace("'", '"'))
    assert len(session_ids) == 1  # list_sessions: the one session this owner holds
    assert lines[3] == "1"  # get_session: one call applied
    assert lines[4].split()[0] == "2"  # reset_session: the second episode
    assert lines[5] == "EPISODE_PHASE_TERMINATED"
    assert 0.0 <= float(lines[6]) <= 1.0


async def test_observations_and_call_results_read_alike(server):
    def play() -> None:
        with SyncClient(server.address) as client:
            session = client.create_session("payment-bad-deploy", seats=["me"])
            agent = client.agent(session.id, session.tokens["me"])
            result = agent.call("get_alerts")
            assert isinstance(result, CallResult) and isinstance(result, Mapping)
            assert isinstance(agent.observation, Mapping)
            # The keys are the proto's ToolResult fields (data_json is read into data);
            # attributes give the same values.
            fields = {f.name for f in agent_pb2.ToolResult.DESCRIPTOR.fields}
            assert set(result) == fields - {"data_json"}
            assert all(result[k] == getattr(result, k) for k in result)
            assert result["observation"]["steps_left"] == agent.observation["steps_left"]
            assert json.loads(json.dumps(dict(result)))["text"] == result.text
            refused = agent.call("read_logs", {"service": "no-such-service"})
            assert refused["ok"] is False and refused["error_code"] == "unknown_service"
            assert "services" in refused["data"]  # the shape of read_logs' error_schema
            agent.close()
            client.close_session(session.id)

    await asyncio.to_thread(play)  # the blocking client, off the server's loop
