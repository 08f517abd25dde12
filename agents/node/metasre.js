// A small META-SRE client for Node.js: the control plane and one Connect stream per seat.
//
// It loads the same .proto files as every other client (protos/ at the repository root) at
// run time with @grpc/proto-loader, so there is no code generation and no build step:
//
//   const { MetasreClient } = require("./metasre");
//   const client = new MetasreClient("127.0.0.1:50051");
//   const { session, tokens } = await client.createSession({ scenario_id: "ad-ranking-crash" });
//   const agent = client.agent(session.session_id, tokens[0].join_token);
//   const joined = await agent.join();
//   const result = await agent.call("get_alerts");
//   await agent.close(); client.close();
//
// Messages are plain objects with the proto's field names (snake_case); enums are their names;
// int64 fields are decimal strings; google.protobuf.Struct fields are plain JSON values.
"use strict";

const crypto = require("node:crypto");
const path = require("node:path");
const grpc = require("@grpc/grpc-js");
const protoLoader = require("@grpc/proto-loader");

/** The repository's proto root: protos/metasre/v1/*.proto live under it. */
const DEFAULT_PROTO_ROOT = path.resolve(__dirname, "..", "..", "protos");

/** Where the vendored google/rpc/*.proto live, relative to the proto root. */
const GOOGLEAPIS = path.join("third_party", "googleapis");

/**
 * Load the metasre.v1 services from `protoRoot` (default: the repository's protos/).
 * google/protobuf/*.proto come with protobufjs; google/rpc/*.proto are vendored beside ours.
 */
function loadProtocol(protoRoot = process.env.METASRE_PROTOS || DEFAULT_PROTO_ROOT) {
  const definition = protoLoader.loadSync(
    [
      "metasre/v1/control.proto",
      "metasre/v1/agent.proto",
      "metasre/v1/watch.proto",
      // Loaded so that the Any details of an in-band google.rpc.Status can be decoded.
      "google/rpc/error_details.proto",
    ],
    {
      includeDirs: [protoRoot, path.join(protoRoot, GOOGLEAPIS)],
      keepCase: true, // the proto's field names, as in grpcurl and the Python client's dicts
      longs: String, // int64 seeds and sequences, without precision loss
      enums: String,
      defaults: true,
      oneofs: true, // a oneof's set member is named by a virtual field (response, kind, ...)
      json: true, // decode google.protobuf.Any into {"@type": ..., ...fields}
    },
  );
  return grpc.loadPackageDefinition(definition).metasre.v1;
}

// -- google.protobuf.Struct <-> plain JSON ------------------------------------------------

// protobufjs bundles google/protobuf/struct.proto with camelCase field names (it always wins
// over a struct.proto on the include path), so Value's members are camelCase even with keepCase.
function toValue(v) {
  if (v === null || v === undefined) return { nullValue: "NULL_VALUE" };
  if (typeof v === "number") return { numberValue: v };
  if (typeof v === "string") return { stringValue: v };
  if (typeof v === "boolean") return { boolValue: v };
  if (Array.isArray(v)) return { listValue: { values: v.map(toValue) } };
  if (typeof v === "object") return { structValue: toStruct(v) };
  throw new TypeError(`cannot put a ${typeof v} in a google.protobuf.Value`);
}

/** Plain JSON data as a google.protobuf.Struct message object. */
function toStruct(obj) {
  const fields = {};
  for (const [k, v] of Object.entries(obj || {})) fields[k] = toValue(v);
  return { fields };
}

function fromValue(v) {
  if (!v) return null;
  switch (v.kind) {
    case "numberValue":
      return v.numberValue;
    case "stringValue":
      return v.stringValue;
    case "boolValue":
      return v.boolValue;
    case "structValue":
      return fromStruct(v.structValue);
    case "listValue":
      return (v.listValue.values || []).map(fromValue);
    default:
      return null;
  }
}

/** A google.protobuf.Struct message object as plain JSON data ({} when absent). */
function fromStruct(s) {
  const out = {};
  for (const [k, v] of Object.entries((s && s.fields) || {})) out[k] = fromValue(v);
  return out;
}

// -- errors -------------------------------------------------------------------------------

const CODE_NAMES = Object.fromEntries(Object.entries(grpc.status).map(([k, v]) => [v, k]));

/** A refused request: a gRPC error, or an in-band google.rpc.Status on the Connect stream. */
class MetasreError extends Error {
  constructor(code, message, details = [], callId = "") {
    super(message);
    this.name = "MetasreError";
    this.code = typeof code === "number" ? CODE_NAMES[code] || String(code) : code;
    this.details = details;
    this.callId = callId;
    const info = details.find((d) => (d["@type"] || "").endsWith("/google.rpc.ErrorInfo"));
    this.reason = info ? info.reason : "";
    const bad = details.find((d) => (d["@type"] || "").endsWith("/google.rpc.BadRequest"));
    this.violations = bad ? bad.field_violations.map((v) => [v.field, v.description]) : [];
  }
}

// -- the client ---------------------------------------------------------------------------

/** Control calls, and Connect streams for agents, over one channel. */
class MetasreClient {
  /**
   * @param {string} target host:port
   * A session belongs to whoever created it: the client makes one random owner token, creates
   * every session with it and sends it on the calls about its sessions (grade, close).
   * opts.ownerToken acts for sessions created with it elsewhere; opts.adminToken reaches every
   * session.
   * @param {{adminToken?: string, ownerToken?: string, protoRoot?: string,
   *   credentials?: grpc.ChannelCredentials}} opts
   */
  constructor(target, opts = {}) {
    const v1 = loadProtocol(opts.protoRoot);
    const credentials = opts.credentials || grpc.credentials.createInsecure();
    this.control = new v1.ControlService(target, credentials);
    // One channel for all three services: the stubs share the first stub's channel.
    const channelOverride = this.control.getChannel();
    this.agents = new v1.AgentService(target, credentials, { channelOverride });
    this.metadata = new grpc.Metadata();
    if (opts.adminToken) this.metadata.set("authorization", `Bearer ${opts.adminToken}`);
    this.admin = Boolean(opts.adminToken);
    this.ownerToken = opts.ownerToken || crypto.randomBytes(24).toString("base64url");
  }

  /** What calls about one session carry: the admin token, else this client's owner token. */
  sessionMetadata() {
    if (this.admin) return this.metadata;
    const metadata = new grpc.Metadata();
    metadata.set("authorization", `Bearer ${this.ownerToken}`);
    return metadata;
  }

  /** Call a ControlService method by name; resolves with the response object. */
  unary(method, request = {}, metadata = this.metadata) {
    return new Promise((resolve, reject) => {
      this.control[method](request, metadata, (err, response) => {
        if (err) reject(new MetasreError(err.code, err.details || err.message));
        else resolve(response);
      });
    });
  }

  serverInfo() {
    return this.unary("GetServerInfo");
  }

  async listScenarios() {
    return (await this.unary("ListScenarios")).scenarios;
  }

  async listTools() {
    return (await this.unary("ListTools")).tools.map((t) => ({
      ...t,
      input_schema: fromStruct(t.input_schema),
    }));
  }

  /**
   * Start a session. seats: agent ids, or {agent_id, role, allowed_tools}.
   * turn_policy / reward_attribution / reward_mode: enum names ("TURN_POLICY_FREE_FOR_ALL",
   * "REWARD_MODE_SPARSE", ...).
   */
  async createSession({
    scenario_id,
    seed = 0,
    seats = ["agent-1"],
    turn_policy,
    reward_attribution,
    reward_mode,
  }) {
    const reply = await this.unary("CreateSession", {
      scenario_id,
      seed: String(seed),
      seats: seats.map((s) => (typeof s === "string" ? { agent_id: s } : s)),
      turn_policy: turn_policy || "TURN_POLICY_FREE_FOR_ALL",
      reward_attribution: reward_attribution || "REWARD_ATTRIBUTION_SHARED",
      reward_mode: reward_mode || "REWARD_MODE_DENSE",
      owner_token: this.ownerToken,
    });
    return reply;
  }

  getGrade(sessionId) {
    return this.unary("GetGrade", { session_id: sessionId }, this.sessionMetadata());
  }

  closeSession(sessionId) {
    return this.unary("CloseSession", { session_id: sessionId }, this.sessionMetadata());
  }

  /** A Connect stream for one seat; call join() on it. batchEvents: see StreamOptions. */
  agent(sessionId, joinToken, { batchEvents = true } = {}) {
    return new AgentConnection(this.agents, sessionId, joinToken, { batchEvents });
  }

  close() {
    this.agents.close();
    this.control.close();
  }
}

/** One agent's bidirectional stream: its own calls and results, and what the team does. */
class AgentConnection {
  constructor(stub, sessionId, joinToken, { batchEvents = true } = {}) {
    this.stub = stub;
    // Events that become durable together come as one message (StreamOptions.batch_events).
    this.batchEvents = batchEvents;
    this.sessionId = sessionId;
    this.joinToken = joinToken;
    this.nextId = 1;
    this.pending = new Map(); // call_id -> {resolve, reject}
    this.waiters = []; // functions re-checked after every message
    this.inbox = { applied: [], messages: [], rewards: [], turns: [], episode_end: null };
    this.agent_id = "";
    this.observation = null;
    this.lastSequence = "0";
    this.ended = null; // the error or reason the stream ended with, once it has
  }

  /** Take the seat; resolves with the Joined message. */
  join() {
    this.stream = this.stub.Connect();
    const joined = new Promise((resolve, reject) => {
      this.pending.set("", { resolve, reject });
    });
    this.stream.on("data", (msg) => this.dispatch(msg));
    this.stream.on("error", (err) => this.lost(new MetasreError(err.code, err.details)));
    this.stream.on("end", () => this.lost(new MetasreError("CANCELLED", "stream ended")));
    this.stream.write({
      join: {
        session_id: this.sessionId,
        join_token: this.joinToken,
        options: { batch_events: this.batchEvents },
      },
    });
    return joined;
  }

  /** Apply one tool call; resolves with its ToolResult (data as plain JSON), rejects on refusal. */
  call(tool, args = {}) {
    if (this.ended) return Promise.reject(this.ended);
    const call_id = `n${this.nextId++}`;
    const promise = new Promise((resolve, reject) => {
      this.pending.set(call_id, { resolve, reject });
    });
    this.stream.write({ call: { call_id, tool, args: toStruct(args) } });
    return promise;
  }

  /** Resolves once predicate(this) holds, re-checked after every message; rejects on timeout. */
  waitFor(predicate, timeoutMs, what = "a condition") {
    if (predicate(this)) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiters = this.waiters.filter((w) => w !== check);
        reject(new Error(`timed out after ${timeoutMs} ms waiting for ${what}`));
      }, timeoutMs);
      const check = () => {
        if (!predicate(this) && !this.ended) return false;
        clearTimeout(timer);
        if (predicate(this)) resolve();
        else reject(this.ended);
        return true;
      };
      this.waiters.push(check);
    });
  }

  dispatch(msg) {
    if (msg.sequence && msg.sequence !== "0") this.lastSequence = msg.sequence;
    const kind = msg.response;
    const body = msg[kind];
    if (kind === "batch") {
      for (const event of body.events) this.dispatch(event);
      return;
    }
    if (kind === "joined") {
      this.agent_id = body.agent_id;
      this.resumeToken = body.resume_token;
      this.observation = body.observation;
      this.settle("", (p) => p.resolve(body));
    } else if (kind === "result") {
      const result = { ...body, data: fromStruct(body.data) };
      if (body.observation) this.observation = body.observation;
      this.settle(body.call_id, (p) => p.resolve(result));
    } else if (kind === "error") {
      const err = new MetasreError(body.code, body.message, body.details || [], msg.call_id);
      this.settle(this.pending.has(msg.call_id) ? msg.call_id : "", (p) => p.reject(err));
    } else if (kind === "applied") {
      const applied = { ...body, args: fromStruct(body.args), data: fromStruct(body.data) };
      this.inbox.applied.push(applied);
    } else if (kind === "message") {
      this.inbox.messages.push(body);
    } else if (kind === "reward") {
      this.inbox.rewards.push(body);
    } else if (kind === "turn") {
      this.inbox.turns.push(body);
    } else if (kind === "episode_end") {
      this.inbox.episode_end = body;
    }
    this.poke();
  }

  settle(callId, fn) {
    const p = this.pending.get(callId);
    if (p) {
      this.pending.delete(callId);
      fn(p);
    }
  }

  poke() {
    this.waiters = this.waiters.filter((check) => !check());
  }

  lost(err) {
    if (this.ended) return;
    this.ended = err;
    for (const p of this.pending.values()) p.reject(err);
    this.pending.clear();
    this.poke();
  }

  /** Hang up (half-close, then cancel); the seat stays the agent's for the grace period. */
  close() {
    if (!this.stream) return;
    this.ended = this.ended || new MetasreError("CANCELLED", "the connection was closed");
    this.stream.end();
    this.stream.cancel();
  }
}

module.exports = {
  AgentConnection,
  DEFAULT_PROTO_ROOT,
  MetasreClient,
  MetasreError,
  fromStruct,
  loadProtocol,
  toStruct,
};
