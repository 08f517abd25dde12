#!/usr/bin/env node
// A scripted META-SRE agent in Node.js. It plays two kinds of incident from the evidence it
// reads over the wire (versions, commits and line numbers vary by seed; nothing is hard-coded):
//
// - a bad release: the suspect's logs show it refusing to start (a missing column, a failed
//   migration, an image pull): describe_service, rollback_deployment, submit_report;
// - a code bug: the logs show a Python traceback: take the newest commit under the service's
//   code folder (git_log), git_show it, revert its hunks with edit_lines, run_tests,
//   submit_report.
//
//   node agents/node/agent.js --target 127.0.0.1:50051 --scenario meta-sre/ad-ranking-crash-v2 \
//     --seed 7 [--min-grade 0.9] [--admin-token T]
//   METASRE_JOIN_TOKEN=T node agents/node/agent.js --target ... --session ID \
//     [--wait-teammate-calls N]
//
// The first form creates a one-seat session; the second joins a seat of an existing session
// (for example next to a Python teammate) with its join token, from the environment (kept off
// the command line) or `--token=T` (with the "=": a token may start with "-").
// Progress goes to stderr as JSON lines ({"event": ...}); the outcome (plan, calls, the
// teammates' calls heard, grade) goes to stdout as one JSON document.
// Exit codes are the `metasre` command line's (ExitCode in cli/errors.py, README "Exit codes"):
// 0 done, 1 the verdict is no (the grade is below --min-grade, or no playbook fits the
// evidence), 2 bad usage, 3 the server refused a request, 10 nothing answers at --target,
// 130 interrupted (Ctrl-C).
"use strict";

const { parseArgs } = require("node:util");
const { MetasreClient } = require("./metasre");

// -- reading evidence ---------------------------------------------------------------------

/** Logs that say a release cannot start: roll it back rather than patch code. */
const BAD_RELEASE = /UndefinedColumn|does not exist|failed to start|migration .*failed|ImagePull/i;
/** A Python traceback frame; the innermost (last) one is where the exception was raised. */
const FRAME = /File "(?<path>[^"]+\.py)", line (?<line>\d+)/;
/** Which visible test suite proves a code fix; only code bugs are scripted here. */
const SUITE = "unit";

/**
 * The service to investigate: the unhealthy one none of whose dependencies is unhealthy
 * (faults flow up the dependency graph), preferring services the alerts name.
 */
function rootSuspect(observation) {
  const services = observation.services || [];
  const sick = new Set(services.filter((s) => s.health !== "healthy").map((s) => s.name));
  const alerted = (observation.alerts || []).map((a) => a.service);
  const deepest = services.filter(
    (s) => sick.has(s.name) && !(s.depends_on || []).some((d) => sick.has(d)),
  );
  deepest.sort((a, b) => rank(alerted, a.name) - rank(alerted, b.name));
  if (deepest.length) return deepest[0].name;
  return alerted[0] || (services[0] && services[0].name);
}

function rank(list, item) {
  const i = list.indexOf(item);
  return i < 0 ? list.length : i;
}

/** Hunks of a unified diff: {path, new_start, old: [lines], new: [lines]}. */
function parseDiff(diff) {
  const hunks = [];
  let cur = null;
  let path = "";
  for (const line of diff.split("\n")) {
    let m;
    if (line.startsWith("+++ ")) {
      const target = line.slice(4).trim();
      path = target.startsWith("b/") ? target.slice(2) : target;
      cur = null;
    } else if (line.startsWith("--- ")) {
      cur = null;
    } else if ((m = /^@@ -(\d+)(?:,\d+)? \+(\d+)(?:,\d+)? @@/.exec(line))) {
      cur = { path, old_start: Number(m[1]), new_start: Number(m[2]), old: [], new: [] };
      hunks.push(cur);
    } else if (!cur || line.startsWith("\\")) {
      continue;
    } else if (line.startsWith("+")) {
      cur.new.push(line.slice(1));
    } else if (line.startsWith("-")) {
      cur.old.push(line.slice(1));
    } else if (line.startsWith(" ") || line === "") {
      cur.old.push(line.slice(1));
      cur.new.push(line.slice(1));
    }
  }
  return hunks.filter((h) => h.old.length || h.new.length);
}

// -- playing ------------------------------------------------------------------------------

class Playbook {
  constructor(agent, log) {
    this.agent = agent;
    this.log = log;
    this.calls = [];
  }

  async call(tool, args = {}) {
    const r = await this.agent.call(tool, args);
    this.calls.push({ tick: r.tick, tool, args, ok: r.ok, error_code: r.error_code });
    this.log({ event: "call", tick: r.tick, tool, ok: r.ok, error_code: r.error_code });
    return r;
  }

  /** Investigate the root suspect, apply the remedy its logs call for, report. */
  async play(observation) {
    const service = rootSuspect(observation);
    const logs = await this.call("read_logs", { service, level: "ERROR", lines: 60 });
    const lines = (logs.data.lines || []).map((l) => String(l.text));
    const cue = lines.find((l) => BAD_RELEASE.test(l));
    if (cue) return this.rollBack(service, cue);
    const frames = lines.map((l) => FRAME.exec(l)).filter(Boolean);
    if (frames.length) return this.revertCommit(service, frames[frames.length - 1], lines);
    throw new NoPlaybook(`no playbook for the evidence in ${service}'s logs`);
  }

  /**
   * The commit to revert: the newest commit under the service's code folder (a release ships
   * the service's latest change; the traceback may be printed with the container's paths,
   * /app/..., or end in a line an older commit wrote, so blame is not the guide here).
   */
  async suspectCommit(service) {
    const info = (await this.call("describe_service", { service })).data;
    const codeDir = String(info.code_dir || service);
    const log = await this.call("git_log", { path: codeDir, limit: 5 });
    const newest = (log.data.commits || []).find((c) => Number(c.minutes_ago) >= 0);
    if (!newest) throw new NoPlaybook(`no commit under ${codeDir} to suspect`);
    return { sha: newest.sha, message: String(newest.message || newest.subject || "") };
  }

  async rollBack(service, cue) {
    const info = (await this.call("describe_service", { service })).data;
    const plan = {
      service,
      category: "bad_deployment",
      location: `deployment:${service}@${info.version}`,
      remediation: "rollback_deployment",
      cue,
    };
    const rolled = await this.call("rollback_deployment", { service });
    if (!rolled.ok) throw new NoPlaybook(`rollback refused: ${rolled.text}`);
    const summary = `${service} ${info.version} cannot start (${cue.trim()}); rolled back.`;
    return this.report(plan, summary);
  }

  async revertCommit(service, frame, lines) {
    const file = frame.groups.path;
    const line = Number(frame.groups.line);
    const blamed = await this.suspectCommit(service);
    const shown = await this.call("git_show", { commit: blamed.sha });
    const diff = String(shown.data.diff || "");
    const hunks = parseDiff(diff).filter((h) => !h.path.startsWith("tests/"));
    if (!hunks.length) throw new NoPlaybook(`commit ${blamed.sha} changes no code`);
    const location = hunks[0].path;
    // Bottom-up, so the line numbers of the hunks above stay valid.
    hunks.sort((x, y) => {
      if (x.path !== y.path) return x.path < y.path ? 1 : -1;
      return y.new_start - x.new_start;
    });
    for (const h of hunks) {
      const args = h.new.length
        ? {
            path: h.path,
            action: "replace",
            start_line: h.new_start,
            end_line: h.new_start + h.new.length - 1,
            content: h.old.join("\n"),
          }
        : {
            path: h.path,
            action: "insert",
            start_line: h.new_start + 1,
            content: h.old.join("\n"),
          };
      const edited = await this.call("edit_lines", args);
      if (!edited.ok) throw new NoPlaybook(`edit_lines refused: ${edited.text}`);
    }
    const tests = await this.call("run_tests", { suite: SUITE });
    const error = lines.filter((l) => /^\w+(\.\w+)*(Error|Exception): /.test(l)).pop() || "";
    const plan = {
      service,
      category: "code_bug",
      location,
      remediation: "code_fix",
      cue: frame[0],
      commit: blamed.sha,
      tests: tests.data.summary || tests.text.split("\n")[0],
    };
    const raised = error.trim() || "an exception";
    const why = `${file}:${line} raises ${raised}; introduced by ${blamed.sha}`;
    return this.report(plan, `${why} ("${blamed.message}"). Reverted it; ${SUITE} tests run.`);
  }

  async report(plan, summary) {
    await this.call("submit_report", {
      root_cause_service: plan.service,
      root_cause_location: plan.location,
      category: plan.category,
      remediation: plan.remediation,
      summary,
    });
    return plan;
  }
}

class NoPlaybook extends Error {}

/** The exit codes this agent uses: the same numbers as the CLI's (cli/errors.py ExitCode). */
const EXIT = Object.freeze({
  OK: 0,
  FAILED: 1,
  USAGE: 2,
  REFUSED: 3,
  UNREACHABLE: 10,
  INTERRUPTED: 130,
});

/** How a failure ends the process, as the CLI ends the same failure. */
function exitCodeOf(err) {
  if (err instanceof UsageError || String(err.code).startsWith("ERR_PARSE_ARGS")) {
    return EXIT.USAGE;
  }
  if (err instanceof NoPlaybook) return EXIT.FAILED;
  // No ErrorInfo: the transport failed, no metasre server answered (the CLI's rule too).
  if (["UNAVAILABLE", "DEADLINE_EXCEEDED"].includes(err.code) && !err.reason) {
    return EXIT.UNREACHABLE;
  }
  if (err.code && typeof err.code === "string" && /^[A-Z_]+$/.test(err.code)) return EXIT.REFUSED;
  return EXIT.FAILED;
}

// -- command line -------------------------------------------------------------------------

const USAGE =
  "usage: agent.js --target HOST:PORT (--scenario ID [--seed N] | --session ID --token=T)\n" +
  "       [--min-grade X] [--admin-token T] [--wait-teammate-calls N] [--timeout SECONDS]";

function options(argv) {
  const { values } = parseArgs({
    args: argv,
    options: {
      target: { type: "string", default: "127.0.0.1:50051" },
      scenario: { type: "string" },
      seed: { type: "string", default: "0" },
      session: { type: "string" },
      token: { type: "string", default: process.env.METASRE_JOIN_TOKEN || "" },
      "admin-token": { type: "string", default: process.env.METASRE_ADMIN_TOKEN || "" },
      "min-grade": { type: "string" },
      "wait-teammate-calls": { type: "string", default: "0" },
      timeout: { type: "string", default: "60" },
      protos: { type: "string" },
      help: { type: "boolean", short: "h" },
    },
  });
  if (values.help) {
    process.stdout.write(`${USAGE}\n`);
    process.exit(EXIT.OK);
  }
  if (!values.scenario === !values.session || (values.session && !values.token)) {
    throw new UsageError("give --scenario, or --session with --token=T or METASRE_JOIN_TOKEN");
  }
  for (const key of ["seed", "min-grade", "wait-teammate-calls", "timeout"]) {
    if (values[key] !== undefined && !Number.isFinite(Number(values[key]))) {
      throw new UsageError(`--${key} must be a number, not ${values[key]}`);
    }
  }
  return values;
}

class UsageError extends Error {}

function log(event) {
  process.stderr.write(`${JSON.stringify(event)}\n`);
}

async function main(argv) {
  const opts = options(argv);
  const timeoutMs = Number(opts.timeout) * 1000;
  const client = new MetasreClient(opts.target, {
    adminToken: opts["admin-token"],
    protoRoot: opts.protos,
  });
  let agent;
  try {
    let sessionId = opts.session;
    let token = opts.token;
    if (opts.scenario) {
      const created = await client.createSession({
        scenario_id: opts.scenario,
        seed: opts.seed,
        seats: [{ agent_id: "node", role: "node-agent" }],
      });
      sessionId = created.session.session_id;
      token = created.tokens[0].join_token;
    }
    agent = client.agent(sessionId, token);
    const joined = await agent.join();
    const { session } = joined;
    log({ event: "joined", session_id: sessionId, agent_id: joined.agent_id, seed: session.seed });

    const wanted = Number(opts["wait-teammate-calls"]);
    const heard = () => agent.inbox.applied.filter((a) => a.agent_id !== agent.agent_id);
    if (wanted > 0) {
      await agent.waitFor(() => heard().length >= wanted, timeoutMs, `${wanted} teammate calls`);
      log({ event: "heard", calls: heard().map((a) => `${a.agent_id}:${a.tool}`) });
    }

    const playbook = new Playbook(agent, log);
    const plan = await playbook.play(joined.observation);
    await agent.waitFor((a) => a.inbox.episode_end, timeoutMs, "the end of the episode");
    const end = agent.inbox.episode_end;

    const minGrade = opts["min-grade"] === undefined ? null : Number(opts["min-grade"]);
    const total = end.grade.total;
    const outcome = {
      // A seat is not told its instance unless the owner asks; the creator knows what it made.
      scenario_id: session.scenario_id || opts.scenario || "",
      seed: Number(session.scenario_id ? session.seed : (opts.seed ?? session.seed)),
      session_id: sessionId,
      agent_id: agent.agent_id,
      plan,
      calls: playbook.calls.map(({ tick, tool, ok }) => ({ tick, tool, ok })),
      heard: heard().map(({ tick, agent_id, tool, ok }) => ({ tick, agent_id, tool, ok })),
      messages: agent.inbox.messages.map(({ from_agent_id, text }) => ({ from_agent_id, text })),
      phase: end.phase,
      grade: {
        total,
        resolved: end.grade.resolved,
        components: Object.fromEntries(end.grade.components.map((c) => [c.name, c.value])),
      },
      agent_rewards: end.agent_rewards,
      // The session's grade as its owner reads it (the client sends its owner token by itself);
      // null when this agent joined a session someone else created.
      owner_grade: opts.scenario ? (await client.getGrade(sessionId)).grade.total : null,
      min_grade: minGrade,
      passed: minGrade === null || total >= minGrade - 1e-9,
    };
    process.stdout.write(`${JSON.stringify(outcome, null, 2)}\n`);
    if (!outcome.passed) {
      log({ event: "below_min_grade", total, min_grade: minGrade });
      return EXIT.FAILED;
    }
    return EXIT.OK;
  } finally {
    if (agent) agent.close();
    client.close();
  }
}

if (require.main === module) {
  process.once("SIGINT", () => {
    log({ event: "interrupted" });
    process.exit(EXIT.INTERRUPTED);
  });
  main(process.argv.slice(2)).then(
    (code) => {
      process.exitCode = code;
    },
    (err) => {
      const code = exitCodeOf(err);
      log({ event: "failed", error: err.message, code: err.code, reason: err.reason });
      if (code === EXIT.USAGE) process.stderr.write(`${USAGE}\n`);
      process.exitCode = code;
    },
  );
}

module.exports = { EXIT, Playbook, exitCodeOf, parseDiff, rootSuspect };
