"""The Node client seats a restricted view and is held to it, like the Python client."""

from __future__ import annotations

import asyncio
import json

from metasre.simulator import resolve

from .conftest import ROOT, TIMEOUT

SCENARIO = "meta-sre/payment-bad-deploy-v2"

CLIENT = r"""
const { MetasreClient } = require("./agents/node/metasre");
const [address, scenario, root] = process.argv.slice(1);
const client = new MetasreClient(address);
(async () => {
  const reply = await client.createSession({
    scenario_id: scenario,
    seats: [{ agent_id: "edge", view: { services: ["api-gateway"], hide_deploys: true } }],
  });
  const agent = client.agent(reply.session.session_id, reply.tokens[0].join_token);
  await agent.join();
  let refused = null;
  try {
    await agent.call("read_logs", { service: root });
  } catch (e) {
    refused = e.reason;
  }
  const alerts = await agent.call("get_alerts", {});
  agent.close();
  return {
    view: agent.view,
    refused,
    rows: alerts.observation.services.map((s) => s.name),
    versions: alerts.observation.services.map((s) => s.version),
  };
})()
  .then((out) => process.stdout.write(JSON.stringify({ out })))
  .catch((e) => process.stdout.write(JSON.stringify({ error: String(e) })))
  .finally(() => client.close());
"""


async def test_a_node_seat_with_a_view_sees_only_it(node, server):
    root = resolve(SCENARIO).spec(0).ground_truth.service
    proc = await asyncio.create_subprocess_exec(
        node, "-e", CLIENT, server.address, SCENARIO, root, cwd=ROOT, stdout=asyncio.subprocess.PIPE
    )
    out, _ = await asyncio.wait_for(proc.communicate(), TIMEOUT)
    assert proc.returncode == 0
    got = json.loads(out)
    assert "out" in got, got
    assert got["out"]["view"]["services"] == ["api-gateway"]
    assert got["out"]["view"]["hide_deploys"] is True
    assert got["out"]["refused"] == "OUTSIDE_VIEW"
    assert got["out"]["rows"] == ["api-gateway"]
    assert got["out"]["versions"] == [""]
