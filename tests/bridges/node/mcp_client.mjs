// Plays a seat through the bridge's MCP server with the official TypeScript MCP SDK.
// Run by tests/bridges/test_mcp_clients.py (`npm ci` here first, as .ci/run does):
//
//   node mcp_client.mjs URL TOKEN PLAN_JSON
//
// PLAN_JSON is a list of [tool, arguments]. Prints one JSON line per event: the server's
// instructions and protocol version, the tools listed, each call's result.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const [url, token, planJson] = process.argv.slice(2);
const transport = new StreamableHTTPClientTransport(new URL(url), {
  requestInit: { headers: { Authorization: `Bearer ${token}` } },
});
const client = new Client({ name: "metasre-ts-check", version: "1" });
await client.connect(transport);
console.log(
  JSON.stringify({
    protocol_version: transport.protocolVersion ?? null,
    instructions: client.getInstructions() ?? null,
  }),
);
const { tools } = await client.listTools();
console.log(JSON.stringify({ tools: tools.map((t) => t.name).sort() }));
for (const [tool, args] of JSON.parse(planJson)) {
  const result = await client.callTool({ name: tool, arguments: args });
  console.log(
    JSON.stringify({
      tool,
      is_error: result.isError ?? false,
      text: result.content.filter((c) => c.type === "text").map((c) => c.text),
      structured: result.structuredContent ?? null,
    }),
  );
}
await transport.terminateSession();
await client.close();
