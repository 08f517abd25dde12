// The report's behaviour: draws the figures, unpacks the trajectories and runs the viewer.
// Every text from a trajectory goes in with textContent, never as HTML: agents write it.
"use strict";

const PLOT_CONFIG = { displaylogo: false, responsive: true };
const SEAT_COLOURS = ["#4c78a8", "#f58518", "#54a24b", "#b279a2", "#e45756", "#72b7b2"];

function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (k === "class") node.className = v;
    else node.setAttribute(k, v);
  }
  for (const child of children) {
    if (child === null || child === undefined) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

function fixed(x, digits) {
  return x === null || x === undefined ? "-" : Number(x).toFixed(digits);
}

function drawFigures() {
  const plots = [];
  for (const div of document.querySelectorAll("div.plot[data-figure]")) {
    const spec = JSON.parse(document.getElementById("figure-" + div.dataset.figure).textContent);
    plots.push(Plotly.newPlot(div, spec.data, spec.layout, PLOT_CONFIG));
  }
  return Promise.all(plots);
}

async function unpack() {
  const holder = document.getElementById("trajectory-data");
  const bytes = Uint8Array.from(atob(holder.textContent.trim()), (c) => c.charCodeAt(0));
  const stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"));
  return JSON.parse(await new Response(stream).text());
}

function argsText(args) {
  const parts = Object.entries(args || {}).map(([k, v]) => {
    let s = typeof v === "string" ? v : JSON.stringify(v);
    if (s.length > 60) s = s.slice(0, 57) + "...";
    return k + "=" + s;
  });
  return parts.join(", ");
}

function timeline(episode) {
  const seats = episode.seats;
  const traces = seats.map((seat, i) => {
    const calls = episode.calls.filter((c) => c.agent === seat);
    return {
      type: "scatter",
      mode: "markers",
      name: seat,
      x: calls.map((c) => c.clock),
      y: calls.map(() => seat),
      text: calls.map((c) => `#${c.tick} ${c.tool}(${argsText(c.args)})` + (c.ok ? "" : ` [${c.error || "refused"}]`)),
      hovertemplate: "t+%{x:.1f} min<br>%{text}",
      marker: {
        size: 11,
        color: SEAT_COLOURS[i % SEAT_COLOURS.length],
        symbol: calls.map((c) => (c.ok ? "circle" : "x")),
        line: { width: 1, color: "#333" },
      },
    };
  });
  // Each seat's running reward on the same clock: a reward paid at a tick lands at that
  // call's clock; the end's settlement, after the last call, at the last call's.
  const clockOf = new Map(episode.calls.map((c) => [c.tick, c.clock]));
  const lastClock = episode.calls.length ? episode.calls[episode.calls.length - 1].clock : 0;
  seats.forEach((seat, i) => {
    let total = 0;
    const xs = [0];
    const ys = [0];
    for (const [tick, agent, value] of episode.rewards) {
      if (agent !== seat) continue;
      total += value;
      xs.push(clockOf.has(tick) ? clockOf.get(tick) : lastClock);
      ys.push(total);
    }
    traces.push({
      type: "scatter",
      mode: "lines",
      line: { shape: "hv", color: SEAT_COLOURS[i % SEAT_COLOURS.length], width: 2 },
      name: seat + " reward",
      x: xs,
      y: ys,
      yaxis: "y2",
      hovertemplate: "t+%{x:.1f} min<br>running reward %{y:.3f}",
    });
  });
  const shapes = [];
  const annotations = [];
  if (episode.sla !== null) {
    shapes.push({ type: "line", x0: episode.sla, x1: episode.sla, yref: "paper", y0: 0, y1: 1, line: { color: "#d62728", dash: "dash" } });
    annotations.push({ x: episode.sla, yref: "paper", y: 1.02, text: `SLA ${episode.sla} min`, showarrow: false, font: { color: "#d62728" } });
  }
  if (episode.mitigated_at !== null) {
    shapes.push({ type: "line", x0: episode.mitigated_at, x1: episode.mitigated_at, yref: "paper", y0: 0, y1: 1, line: { color: "#2ca02c" } });
    annotations.push({ x: episode.mitigated_at, yref: "paper", y: 0.45, xanchor: "left", text: `mitigated t+${episode.mitigated_at}`, showarrow: false, font: { color: "#2ca02c" } });
  }
  const last = Math.max(episode.sla || 0, ...episode.calls.map((c) => c.clock || 0));
  const layout = {
    title: { text: "Calls on the simulated clock, seat by seat (x: refused or failed), and each seat's running reward", x: 0.01, font: { size: 14 } },
    height: 330 + 40 * seats.length,
    margin: { l: 120, r: 20, t: 50, b: 50 },
    xaxis: { title: { text: "simulated minutes since the page" }, range: [0, last * 1.05 + 0.5], anchor: "y2" },
    yaxis: { categoryorder: "array", categoryarray: seats.slice().reverse(), domain: [0.5, 1] },
    yaxis2: { domain: [0, 0.4], title: { text: "running reward" }, zeroline: true },
    shapes: shapes,
    annotations: annotations,
    template: "plotly_white",
    showlegend: false,
  };
  return Plotly.react("viewer-timeline", traces, layout, PLOT_CONFIG);
}

function rewardText(call) {
  if (call.reward === null || call.reward === undefined) return "";
  const parts = Object.entries(call.reward_components).map(([k, v]) => `${k} ${v >= 0 ? "+" : ""}${fixed(v, 3)}`);
  return `reward ${call.reward >= 0 ? "+" : ""}${fixed(call.reward, 3)}` + (parts.length ? ` (${parts.join(", ")})` : "");
}

function show(episode) {
  const viewer = document.getElementById("viewer");
  viewer.dataset.episode = episode.key;
  const head = document.getElementById("viewer-head");
  head.replaceChildren(
    el("h3", {}, `${episode.family} seed ${episode.seed}: ${episode.config}`,
      episode.split ? el("span", { class: "split " + episode.split }, `${episode.split} split`) : null),
    el(
      "p",
      { class: episode.resolved ? "verdict pass" : "verdict fail" },
      `${episode.resolved ? "resolved" : "not resolved"}, grade ${fixed(episode.grade, 2)}; ` +
        `${episode.calls.length} calls by ${episode.seats.join(", ")}; turn policy ${episode.turn_policy}, ` +
        `attribution ${episode.attribution}; SLA ${episode.sla === null ? "-" : episode.sla + " min"}, ` +
        (episode.mitigated_at === null ? "never mitigated" : `mitigated at t+${episode.mitigated_at}`) +
        `; run ${episode.run}`
    )
  );
  const grade = el("table", { class: "small grade" },
    el("thead", {}, el("tr", {}, el("th", {}, "component"), el("th", {}, "score"), el("th", {}, "weight"), el("th", {}, "adds"), el("th", {}, "detail"))));
  const body = el("tbody");
  for (const c of episode.components) {
    body.append(el("tr", {}, el("td", {}, c.name), el("td", {}, fixed(c.score, 2)), el("td", {}, fixed(c.weight, 2)), el("td", {}, fixed(c.value, 3)), el("td", {}, c.detail)));
  }
  body.append(el("tr", { class: "total" }, el("td", {}, "grade"), el("td", {}, fixed(episode.grade, 3)), el("td"), el("td"), el("td", {},
    Object.entries(episode.credit).map(([s, v]) => `${s} ${fixed(v, 2)}`).join(", "))));
  grade.append(body);
  document.getElementById("viewer-grade").replaceChildren(el("h3", {}, "Grade at the end"), grade);
  const list = document.getElementById("viewer-calls");
  list.replaceChildren();
  for (const call of episode.calls) {
    const seatIndex = episode.seats.indexOf(call.agent);
    const isMessage = call.tool === "send_message";
    const summary = el("summary", {},
      el("span", { class: "clock" }, `t+${fixed(call.clock, 1)}`),
      el("span", { class: "seat", style: `border-color:${SEAT_COLOURS[seatIndex % SEAT_COLOURS.length]}` }, call.agent),
      el("span", { class: "tool" }, call.tool),
      el("span", { class: "args" }, isMessage ? "" : argsText(call.args)),
      call.ok ? null : el("span", { class: "error" }, call.error || "refused"),
      el("span", { class: "reward" }, rewardText(call)));
    const item = el("li", { class: "call" + (isMessage ? " message" : "") + (call.ok ? "" : " failed"), "data-tool": call.tool, "data-tick": String(call.tick) });
    item.append(el("details", {}, summary, el("pre", {}, call.result)));
    if (isMessage) {
      item.append(el("div", { class: "bubble" }, el("b", {}, `${call.agent} to ${(call.args.to || ["team"]).toString()}: `), String(call.args.text || "")));
    }
    list.append(item);
  }
  document.querySelector("#viewer-page pre").textContent = episode.page;
  return timeline(episode);
}

function fillPicker(episodes, onlyFailed) {
  const picker = document.getElementById("episode-picker");
  const keep = picker.value;
  picker.replaceChildren();
  const groups = new Map();
  for (const e of episodes) {
    if (onlyFailed && e.resolved) continue;
    if (!groups.has(e.config)) groups.set(e.config, el("optgroup", { label: e.config }));
    groups.get(e.config).append(el("option", { value: e.key }, `${e.family.replace("meta-sre/", "")} seed ${e.seed}${e.split === "test" ? " [test]" : ""}: ${e.resolved ? "pass" : "fail"} ${fixed(e.grade, 2)}`));
  }
  for (const group of groups.values()) picker.append(group);
  if (keep && [...picker.options].some((o) => o.value === keep)) picker.value = keep;
}

function wanted() {
  const match = /(?:^|[#&])episode=([^&]+)/.exec(location.hash);
  return match ? decodeURIComponent(match[1]) : null;
}

async function startViewer() {
  const episodes = await unpack();
  const byKey = new Map(episodes.map((e) => [e.key, e]));
  const picker = document.getElementById("episode-picker");
  const onlyFailed = document.getElementById("only-failed");
  fillPicker(episodes, false);
  const first = byKey.get(wanted()) || episodes[0];
  picker.value = first.key;
  picker.addEventListener("change", () => {
    history.replaceState(null, "", "#episode=" + encodeURIComponent(picker.value));
    show(byKey.get(picker.value));
  });
  onlyFailed.addEventListener("change", () => fillPicker(episodes, onlyFailed.checked));
  window.addEventListener("hashchange", () => {
    const e = byKey.get(wanted());
    if (e) {
      picker.value = e.key;
      show(e);
      document.getElementById("trajectories").scrollIntoView();
    }
  });
  return show(first);
}

Promise.all([drawFigures(), startViewer()]).then(
  () => { document.body.dataset.rendered = "yes"; },
  (err) => { document.body.dataset.rendered = "error: " + err; console.error(err); }
);
