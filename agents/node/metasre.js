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
//
// Refusals that say they will pass are retried by the client itself, as the Python client
// does (metasre.agents.retry): UNAVAILABLE SERVER_HANDING_OVER (wait for the next server,
// resume the seat, send the call again under its call_id) and any refusal with
// google.rpc.RetryInfo (wait the server's delay). opts.retry tunes it; retry: false turns it off.
"use strict";

const crypto = require("node:crypto");
const fs = require("node:fs");
const path = require("node:path");
const grpc = require("@grpc/grpc-js");
const protoLoader = require("@grpc/proto-loader");
// proto-loader's own protobufjs: it decodes the google.rpc.Status of a call's trailers.
const protobuf = require("protobufjs");

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

/** google.rpc.Status, able to unpack its ErrorInfo, BadRequest and RetryInfo details. */
function loadStatusType(protoRoot = process.env.METASRE_PROTOS || DEFAULT_PROTO_ROOT) {
  const root = new protobuf.Root();
  const dirs = [path.join(protoRoot, GOOGLEAPIS), protoRoot];
  root.resolvePath = (_origin, target) =>
    dirs.map((d) => path.join(d, target)).find((f) => fs.existsSync(f)) || target;
  root.loadSync(["google/rpc/status.proto", "google/rpc/error_details.proto"], { keepCase: true });
  return root.lookupType("google.rpc.Status");
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

/** A google.protobuf.Duration as JSON ("1.5s") or as an object ({seconds, nanos}), in ms. */
function durationMs(d) {
  if (typeof d === "string") return Math.max(0, parseFloat(d) * 1000);
  return Math.max(0, Number((d && d.seconds) || 0) * 1000 + Number((d && d.nanos) || 0) / 1e6);
}

/**
 * A refused request: a gRPC error, or an in-band google.rpc.Status on the Connect stream.
 * `lost` is true when a Connect stream ended before the answer came (the call may or may not
 * have been applied: resume and send it again under the same call_id); `retryDelayMs` is the
 * server's RetryInfo, when it gave one.
 */
class MetasreError extends Error {
  constructor(code, message, details = [], callId = "") {
    super(message);
    this.name = "MetasreError";
    this.code = typeof code === "number" ? CODE_NAMES[code] || String(code) : code;
    this.details = details;
    this.callId = callId;
    this.lost = false;
    const info = details.find((d) => (d["@type"] || "").endsWith("/google.rpc.ErrorInfo"));
    this.reason = info ? info.reason : "";
    this.errorMetadata = info ? info.metadata || {} : {}; // ErrorInfo.metadata
    const bad = details.find((d) => (d["@type"] || "").endsWith("/google.rpc.BadRequest"));
    this.violations = bad ? bad.field_violations.map((v) => [v.field, v.description]) : [];
    const retry = details.find((d) => (d["@type"] || "").endsWith("/google.rpc.RetryInfo"));
    this.retryDelayMs = retry ? durationMs(retry.retry_delay) : null;
  }
}

let statusType = null;

/** The MetasreError of a failed gRPC call, with the rich details of its trailers if any. */
function fromGrpcError(err, { lost = false } = {}) {
  let details = [];
  const raw = err.metadata ? err.metadata.get("grpc-status-details-bin") : [];
  if (raw.length) {
    statusType = statusType || loadStatusType();
    const status = statusType.toObject(statusType.decode(raw[0]), {
      longs: String,
      enums: String,
      defaults: true,
      json: true, // google.protobuf.Any as {"@type": ..., ...fields}, as the loader decodes it
    });
    details = status.details || [];
  }
  const error = new MetasreError(err.code, err.details || err.message, details);
  error.lost = lost;
  return error;
}

// -- retries ------------------------------------------------------------------------------

const HANDING_OVER = "SERVER_HANDING_OVER";
// A call that reached a fleet's server not holding its session; ErrorInfo owner_endpoint says where.
const ON_OTHER_SHARD = "SESSION_ON_OTHER_SHARD";

/** The Python client's defaults (metasre.agents.retry.RetryPolicy), in milliseconds. */
const DEFAULT_RETRY = Object.freeze({
  maxAttempts: 5, // tries in all of a call refused with RetryInfo
  maxRetryDelayMs: 30000, // the longest wait on a server's RetryInfo
  handoverTimeoutMs: 30000, // how long to keep trying through a handover
  initialBackoffMs: 50, // the first wait between tries in a handover, doubled each try
  maxBackoffMs: 1000, // the longest wait between tries in a handover
});

/** The retry policy of opts.retry: the defaults, overridden; false for none. */
function retryPolicy(retry) {
  if (retry === false) return { ...DEFAULT_RETRY, maxAttempts: 1, handoverTimeoutMs: 0 };
  return { ...DEFAULT_RETRY, ...(retry || {}) };
}

// A fleet's session ids end in -s<slot> (ShardInfo.slot in control.proto): a shard that dies
// is started again on its slot and rebuilds them, so the client waits for it as for a handover.
const FLEET_SESSION_ID = /^[0-9a-f]{16}-s\d{1,4}$/;

/** Whether sessionId is a fleet's, whose shard comes back when it dies. */
function inFleet(sessionId) {
  return Boolean(sessionId) && FLEET_SESSION_ID.test(sessionId);
}

/**
 * Whether err says a server will take the call soon: a handover's next server, or (inFleet)
 * the restarted shard of a fleet's session (UNAVAILABLE with no reason of the server's, or a
 * stream that broke mid-message as the shard was killed: INTERNAL).
 */
function passesLikeHandover(err, fleet) {
  if (err.reason === HANDING_OVER) return err.code === "UNAVAILABLE";
  if (!fleet || err.reason) return false;
  return err.code === "UNAVAILABLE" || (err.code === "INTERNAL" && err.lost === true);
}

/** Milliseconds to wait before trying again, or null to give up (see DEFAULT_RETRY). */
function retryDelayMs(policy, err, attempt, elapsedMs, fleet = false) {
  if (passesLikeHandover(err, fleet)) {
    if (elapsedMs >= policy.handoverTimeoutMs) return null;
    const backoff = Math.min(policy.maxBackoffMs, policy.initialBackoffMs * 2 ** (attempt - 1));
    // Jitter spreads the agents of a handed-over server over the next one's start.
    return Math.min(backoff * (0.5 + Math.random() / 2), policy.handoverTimeoutMs - elapsedMs);
  }
  if (err.retryDelayMs !== null && err.retryDelayMs !== undefined && attempt < policy.maxAttempts) {
    return Math.min(err.retryDelayMs, policy.maxRetryDelayMs);
  }
  return null;
}

/**
 * Make a call's tries until one succeeds or the policy gives up. attempt(readyWithinMs) makes
 * one; after a handover refusal readyWithinMs is how long it may wait for a server (gRPC's
 * waitForReady with that deadline), else null.
 */
async function withRetries(policy, attempt, fleet = false) {
  let first = null;
  let handover = null;
  let readyWithinMs = null;
  for (let tries = 1; ; tries++) {
    try {
      return await attempt(readyWithinMs);
    } catch (err) {
      if (!(err instanceof MetasreError)) throw err;
      if (handover && err.code === "DEADLINE_EXCEEDED" && !err.reason) throw handover;
      const now = Date.now();
      if (first === null) first = now;
      const wait = retryDelayMs(policy, err, tries, now - first, fleet);
      if (wait === null) throw err;
      if (passesLikeHandover(err, fleet)) handover = err;
      await new Promise((resolve) => setTimeout(resolve, wait));
      if (handover) readyWithinMs = Math.max(1, policy.handoverTimeoutMs - (Date.now() - first));
    }
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
   * opts.retry: see DEFAULT_RETRY (false: every refusal at once).
   * @param {{adminToken?: string, ownerToken?: string, protoRoot?: string,
   *   credentials?: grpc.ChannelCredentials, retry?: object | false}} opts
   */
  constructor(target, opts = {}) {
    this.v1 = loadProtocol(opts.protoRoot);
    this.target = target;
    this.retry = retryPolicy(opts.retry);
    this.credentials = opts.credentials || grpc.credentials.createInsecure();
    ({ control: this.control, agents: this.agents } = this.dial(target));
    // A fleet (metasre serve --workers N): each session lives on one shard, whose endpoint
    // CreateSession names (SessionInfo.endpoint) or a refusal names (SESSION_ON_OTHER_SHARD).
    this.shards = new Map(); // endpoint -> {control, agents}
    this.routes = new Map(); // session id -> endpoint, when not the target
    this.metadata = new grpc.Metadata();
    if (opts.adminToken) this.metadata.set("authorization", `Bearer ${opts.adminToken}`);
    this.admin = Boolean(opts.adminToken);
    this.ownerToken = opts.ownerToken || crypto.randomBytes(24).toString("base64url");
  }

  /** Stubs for the control and agent services on one channel to `target`. */
  dial(target) {
    const control = new this.v1.ControlService(target, this.credentials);
    // One channel for both services: the stubs share the first stub's channel.
    const channelOverride = control.getChannel();
    return { control, agents: new this.v1.AgentService(target, this.credentials, { channelOverride }) };
  }

  /** The stubs that reach the server holding sessionId (the target's by default). */
  stubsFor(sessionId) {
    const endpoint = sessionId ? this.routes.get(sessionId) : undefined;
    if (endpoint === undefined) return { control: this.control, agents: this.agents };
    if (!this.shards.has(endpoint)) this.shards.set(endpoint, this.dial(endpoint));
    return this.shards.get(endpoint);
  }

  /** Remember where a session lives; true when `err` named a new holder for it. */
  follow(sessionId, err) {
    const endpoint = (err.errorMetadata || {}).owner_endpoint;
    if (err.reason !== ON_OTHER_SHARD || !endpoint) return false;
    if ((this.routes.get(sessionId) || this.target) === endpoint) return false;
    this.routes.set(sessionId, endpoint);
    return true;
  }

  /** What calls about one session carry: the admin token, else this client's owner token. */
  sessionMetadata() {
    if (this.admin) return this.metadata;
    const metadata = new grpc.Metadata();
    metadata.set("authorization", `Bearer ${this.ownerToken}`);
    return metadata;
  }

  /**
   * Call a ControlService method by name; resolves with the response object. With sessionId,
   * at the shard holding that session (followed once if a server names another).
   */
  unary(method, request = {}, metadata = this.metadata, sessionId = null) {
    return withRetries(this.retry, async (readyWithinMs) => {
      const options =
        readyWithinMs === null
          ? {}
          : { waitForReady: true, deadline: new Date(Date.now() + readyWithinMs) };
      if (sessionId) {
        // Affinity for proxies that route by header (Envoy hash_policy, gRPC ring hash).
        metadata = metadata.clone();
        metadata.set("x-session-id", sessionId);
      }
      const once = () =>
        new Promise((resolve, reject) => {
          this.stubsFor(sessionId).control[method](request, metadata, options, (err, response) => {
            if (err) reject(fromGrpcError(err));
            else resolve(response);
          });
        });
      try {
        return await once();
      } catch (err) {
        if (!sessionId || !this.follow(sessionId, err)) throw err;
        return once();
      }
    }, inFleet(sessionId));
  }

  /**
   * Where sessionId lives now that its shard died: the agents stub there, or null to stay put.
   * Asks the target (the directory) again, which answers once the shard serves again (after
   * rebuilding its sessions); rejects with UNAVAILABLE until then, for the retry to wait on. A
   * client that does not own the session (a join token only) cannot ask: it resumes in place.
   */
  async locate(sessionId, readyWithinMs) {
    const known = this.routes.get(sessionId);
    this.routes.delete(sessionId);
    const metadata = this.sessionMetadata();
    metadata.set("x-session-id", sessionId);
    const options = { waitForReady: true, deadline: new Date(Date.now() + readyWithinMs) };
    try {
      const reply = await new Promise((resolve, reject) => {
        this.control.GetSession({ session_id: sessionId }, metadata, options, (err, response) =>
          err ? reject(fromGrpcError(err)) : resolve(response),
        );
      });
      const endpoint = reply.session.endpoint;
      if (endpoint && endpoint !== this.target) this.routes.set(sessionId, endpoint);
      return this.stubsFor(sessionId).agents;
    } catch (err) {
      if (known !== undefined) this.routes.set(sessionId, known);
      if (this.follow(sessionId, err)) return this.stubsFor(sessionId).agents;
      if (err.code === "UNAVAILABLE" || err.code === "DEADLINE_EXCEEDED") throw err;
      return null;
    }
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
   * Start a session. seats: agent ids, or {agent_id, role, allowed_tools, view}, where view is
   * {services: [...], hide_code, hide_data, hide_deploys} (common.proto's View; a role the
   * scenario declares gives its seat that role's view unless the seat names its own).
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
    const endpoint = reply.session.endpoint;
    if (endpoint && endpoint !== this.target) this.routes.set(reply.session.session_id, endpoint);
    return reply;
  }

  getGrade(sessionId) {
    return this.unary("GetGrade", { session_id: sessionId }, this.sessionMetadata(), sessionId);
  }

  closeSession(sessionId) {
    return this.unary("CloseSession", { session_id: sessionId }, this.sessionMetadata(), sessionId);
  }

  /** A Connect stream for one seat; call join() on it. batchEvents: see StreamOptions. */
  agent(sessionId, joinToken, { batchEvents = true } = {}) {
    return new AgentConnection(this.stubsFor(sessionId).agents, sessionId, joinToken, {
      batchEvents,
      retry: this.retry,
      follow: (err) => (this.follow(sessionId, err) ? this.stubsFor(sessionId).agents : null),
      locate: (readyWithinMs) => this.locate(sessionId, readyWithinMs),
    });
  }

  close() {
    for (const stubs of [{ control: this.control, agents: this.agents }, ...this.shards.values()]) {
      stubs.agents.close();
      stubs.control.close();
    }
  }
}

/** One agent's bidirectional stream: its own calls and results, and what the team does. */
class AgentConnection {
  constructor(
    stub,
    sessionId,
    joinToken,
    { batchEvents = true, retry, follow = null, locate = null } = {},
  ) {
    this.stub = stub;
    // Given a refusal naming the shard that holds the session, the stub reaching it (or null).
    this.follow = follow;
    // After the session's shard died: the stub reaching the shard serving it now (or null).
    this.locate = locate;
    this.inFleet = inFleet(sessionId);
    this.retry = retry || retryPolicy();
    this.resuming = null; // the resume under way, shared by the calls that wait for it
    // Events that become durable together come as one message (StreamOptions.batch_events).
    this.batchEvents = batchEvents;
    this.sessionId = sessionId;
    this.joinToken = joinToken;
    this.nextId = 1;
    // Ids unique across connections too: another connection of the same seat (a restarted
    // agent joining again) must not repeat one, which the server refuses (CALL_ID_REUSED).
    this.idPrefix = crypto.randomBytes(4).toString("hex");
    this.pending = new Map(); // call_id -> {resolve, reject}
    this.waiters = []; // functions re-checked after every message
    this.inbox = { applied: [], messages: [], rewards: [], turns: [], episode_end: null };
    this.agent_id = "";
    this.observation = null;
    this.lastSequence = "0";
    this.ended = null; // the error or reason the stream ended with, once it has
  }

  /** Take the seat; resolves with the Joined message (at the shard a refusal names, if one does). */
  async join() {
    const first = {
      join: {
        session_id: this.sessionId,
        join_token: this.joinToken,
        options: { batch_events: this.batchEvents },
      },
    };
    try {
      return await this.open(first);
    } catch (err) {
      const stub = this.follow ? this.follow(err) : null;
      if (!stub) throw err;
      this.stub = stub;
      return this.open(first);
    }
  }

  /** Take the seat back after a dropped stream, hearing what was missed since lastSequence. */
  resume(readyWithinMs = null) {
    return this.open(
      {
        resume: {
          session_id: this.sessionId,
          resume_token: this.resumeToken,
          after_sequence: this.lastSequence,
          options: { batch_events: this.batchEvents },
        },
      },
      readyWithinMs,
    );
  }

  open(first, readyWithinMs = null) {
    // With readyWithinMs (a handover's next server starting), wait for a server that long. Not
    // a gRPC deadline: that would end the stream itself once it passed.
    const options = readyWithinMs === null ? {} : { waitForReady: true };
    const metadata = new grpc.Metadata();
    metadata.set("x-session-id", this.sessionId); // affinity for proxies routing by header
    const stream = (this.stream = this.stub.Connect(metadata, options));
    this.ended = null;
    const joined = new Promise((resolve, reject) => {
      this.pending.set("", { resolve, reject });
    });
    // A stream a resume replaced says nothing more about this connection.
    stream.on("data", (msg) => stream === this.stream && this.dispatch(msg));
    stream.on("error", (err) => {
      if (stream === this.stream) this.lost(fromGrpcError(err, { lost: true }));
    });
    stream.on("end", () => {
      if (stream !== this.stream) return;
      const err = new MetasreError("CANCELLED", "the server ended the stream");
      err.lost = true;
      this.lost(err);
    });
    stream.write(first);
    if (readyWithinMs === null) return joined;
    let timer;
    const late = new Promise((_resolve, reject) => {
      timer = setTimeout(() => {
        reject(new MetasreError("DEADLINE_EXCEEDED", `no server within ${readyWithinMs} ms`));
        stream.cancel();
      }, readyWithinMs);
    });
    return Promise.race([joined, late]).finally(() => clearTimeout(timer));
  }

  /**
   * Apply one tool call; resolves with its ToolResult (data as plain JSON), rejects on refusal.
   * A handover (SERVER_HANDING_OVER) is waited out: the seat is resumed on the next server and
   * the call sent again under the same call_id. opts.callId: the call's id (default: a new one).
   */
  call(tool, args = {}, { callId } = {}) {
    const call_id = callId || `${this.idPrefix}-${this.nextId++}`;
    return withRetries(this.retry, async (readyWithinMs) => {
      if (readyWithinMs !== null && this.ended) {
        if (!this.resuming) {
          this.resuming = this.relocate(readyWithinMs)
            .then(() => this.resume(readyWithinMs))
            .finally(() => {
              this.resuming = null;
            });
        }
        await this.resuming;
      }
      return this.callOnce(tool, args, call_id);
    }, this.inFleet);
  }

  /** Before resuming a fleet's seat: ask where its session lives now (its shard may be new). */
  async relocate(readyWithinMs) {
    if (!this.inFleet || this.locate === null) return;
    const stub = await this.locate(readyWithinMs);
    if (stub !== null) this.stub = stub;
  }

  callOnce(tool, args, call_id) {
    if (this.ended) return Promise.reject(this.ended);
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
      this.view = body.view || {};
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
  DEFAULT_RETRY,
  MetasreClient,
  MetasreError,
  fromStruct,
  loadProtocol,
  toStruct,
};
