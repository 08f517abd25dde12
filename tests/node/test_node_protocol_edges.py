"""The Node client at the protocol's edges (issue 28): a refused call fails at once."""

from __future__ import annotations

import asyncio
import json

from metasre.service import Limits, ServerConfig, build_server

from .conftest import ROOT, TIMEOUT

LIMIT = 64 * 1024

CLIENT = r"""
const { MetasreClient } = require("./agents/node/metasre");
const [address, size] = process.argv.slice(1);
const client = new MetasreClient(address, { retry: false });
(async () => {
  const reply = await client.createSession({
    scenario_id: "payment-bad-deploy", seats: [{ agent_id: "a" }],
  });
  const agent = client.agent(reply.session.session_id, reply.tokens[0].join_token);
  await agent.join();
  let refused = null;
  try {
    await agent.call("read_logs", { service: "s".repeat(Number(size)) }, { callId: "huge" });
  } catch (e) {
    refused = { reason: e.reason, callId: e.callId || e.call_id };
  }
  const alerts = await agent.call("get_alerts", {});
  agent.close();
  return { refused, ok: alerts.ok };
})()
  .then((out) => process.stdout.write(JSON.stringify({ out })))
  .catch((e) => process.stdout.write(JSON.stringify({ error: String(e) })))
  .finally(() => client.close());
"""


async def test_a_node_call_refused_as_too_large_fails_at_once_and_the_stream_goes_on(node):
    """Item 2: the refusal named no call_id, so the Node client's call never settled."""
    config = ServerConfig(port=0, limits=Limits(max_message_bytes=LIMIT), grace_seconds=0.5)
    server = await build_server(config)
    await server.start()
    try:
        proc = await asyncio.create_subprocess_exec(
            node,
            "-e",
            CLIENT,
            server.address,
            str(2 * LIMIT),
            cwd=ROOT,
            stdout=asyncio.subprocess.PIPE,
        )
        out, _ = await asyncio.wait_for(proc.communicate(), TIMEOUT)
    finally:
        await server.stop(0.5)
    assert proc.returncode == 0
    got = json.loads(out)
    assert got == {
        "out": {"refused": {"reason": "MESSAGE_TOO_LARGE", "callId": "huge"}, "ok": True}
    }
