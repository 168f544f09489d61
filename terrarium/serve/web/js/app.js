// The page: sessions, and for the open session its topology, traffic, transcripts, prompt,
// charts and voice, all from the serve API (GET /v1/team and the session's event stream).
import { api, followEvents } from "./api.js";
import { $, h, tabs } from "./dom.js";
import { TopologyView } from "./topology.js";
import { TrafficView } from "./traffic.js";
import { TranscriptView } from "./transcript.js";
import { Composer } from "./composer.js";
import { Approvals } from "./approvals.js";
import { Charts } from "./charts.js";
import { PromptView } from "./prompt.js";
import { Voice } from "./voice.js";

const enc = encodeURIComponent;
const state = { team: null, session: null, stream: null, view: "sessions", openedAt: 0 };
window.terrariumState = state;

const topology = new TopologyView($("#topology"), $("#topology-list"));
const traffic = new TrafficView($("#traffic"), $("#traffic-filter"), $("#traffic-follow"), $("#traffic-count"));
const transcripts = new TranscriptView($("#transcript"), $("#transcript-creature"));
const charts = new Charts($("#chart-ttfa"), $("#chart-turns"), $("#chart-tokens"));
const prompt = new PromptView($("#prompt-creature"), $("#prompt-summary"), $("#prompt-sections"),
  $("#prompt-text"), $("#prompt-text-box"),
  (c) => api(`/v1/sessions/${enc(state.session.id)}/prompt/${enc(c)}`));
const composer = new Composer($("#composer"), $("#composer-fields"), $("#composer-error"),
  $("#composer-ok"), $("#composer-channel"), sendInput);
const approvals = new Approvals($("#approval"), $("#approvals-list"), $("#approvals-none"),
  (item, body) => api(`/v1/sessions/${enc(state.session.id)}/approvals/${enc(item.id)}`, { method: "POST", body }));
window.terrariumApprovals = approvals;
const voice = new Voice($("#talk"), $("#voice-status"), $("#mic-level"), $("#voice-log"), (ms) => charts.firstAudio(ms));

const select = tabs($("#tablist"), (name) => {
  state.view = name;
  if (name === "sessions") loadSessions();
  if (name === "transcripts") loadTranscript();
  if (name === "prompt" && state.session) prompt.refresh();
  if (name === "charts") charts.draw();
});
$("#prompt-refresh").addEventListener("click", () => state.session && prompt.refresh());

async function sendInput(channel, payload) {
  if (!state.session) throw new Error("Open or create a session first.");
  traffic.expect("user", channel, payload);
  try {
    return await api(`/v1/sessions/${enc(state.session.id)}/input`, { method: "POST", body: { payload } });
  } catch (exc) {
    traffic.unexpect("user", channel, payload);
    throw exc;
  }
}

// ---- sessions -------------------------------------------------------------------------
function sessionError(msg) {
  const el = $("#sessions-error");
  el.hidden = !msg;
  el.textContent = msg || "";
}

async function loadSessions() {
  let data;
  try { data = await api("/v1/sessions"); } catch (exc) { sessionError(`Sessions cannot be listed: ${exc.message}`); return; }
  sessionError("");
  const rows = (data.sessions || []).slice().sort((a, b) => (b.updated_at || "").localeCompare(a.updated_at || ""));
  const body = $("#sessions-body");
  if (!rows.length) {
    body.replaceChildren(h("tr", {}, h("td", { colspan: 6, class: "muted", text: "No sessions yet: create one above." })));
    return;
  }
  body.replaceChildren(...rows.map((s) => {
    const name = s.name || "(unnamed)";
    return h("tr", { class: state.session?.id === s.id ? "current" : "", "data-session": s.id },
      h("td", { text: name }), h("td", { class: "mono wide", text: s.id.slice(0, 12) + "…", title: s.id }),
      h("td", { text: s.loaded || s.status === "unloaded" ? s.status : `${s.status} (unloaded)` }), h("td", { class: "num", text: s.turns }),
      h("td", { class: "wide", text: s.updated_at ? new Date(s.updated_at).toLocaleString() : "" }),
      h("td", {}, h("button", { type: "button", "aria-label": `Open session ${name}`, text: "Open", onclick: () => openSession(s, true) }),
        " ", h("button", { type: "button", class: "danger", "aria-label": `Delete session ${name}`, text: "Delete", onclick: () => deleteSession(s) })));
  }));
}

$("#new-session").addEventListener("submit", async (e) => {
  e.preventDefault();
  const name = $("#new-session-name").value.trim();
  try {
    const s = await api("/v1/sessions", { method: "POST", body: name ? { name } : {} });
    $("#new-session-name").value = "";
    await openSession(s, true);
  } catch (exc) {
    sessionError(exc.message);
  }
});

async function deleteSession(s) {
  try {
    await api(`/v1/sessions/${enc(s.id)}`, { method: "DELETE" });
  } catch (exc) {
    sessionError(exc.message);
    return;
  }
  if (state.session?.id === s.id) closeSession();
  loadSessions();
}

function closeSession() {
  state.stream?.close();
  state.stream = null;
  state.session = null;
  voice.setSession(null);
  composer.enable(false);
  $("#session-label").textContent = "no session open";
  history.replaceState(null, "", location.pathname + location.search);
}

async function openSession(s, show) {
  closeSession();
  state.session = s;
  state.openedAt = performance.timeOrigin + performance.now();
  for (const v of [traffic, transcripts, charts, prompt]) v.clear();
  topology.reset();
  approvals.clear();
  $("#session-label").textContent = `session ${s.name || s.id.slice(0, 8)}`;
  history.replaceState(null, "", `#session=${s.id}`);
  composer.enable(true);
  voice.setSession(s.id);
  state.stream = followEvents(s.id, 0, onEvent, (st) => {
    const el = $("#conn");
    el.textContent = st === "gone" ? "session deleted" : st;
    el.classList.toggle("live", st === "live");
    if (st === "gone" && state.session?.id === s.id) { closeSession(); el.textContent = "session deleted"; }
  }, async () => {
    try { await api(`/v1/sessions/${enc(s.id)}`); return true; } catch (exc) { return exc.status !== 404; }
  });
  refreshApprovals();
  if (show) select("team");
  else loadSessions();
}

// ---- events ---------------------------------------------------------------------------
let approvalsTimer = 0;
function refreshApprovals() {
  clearTimeout(approvalsTimer);
  approvalsTimer = setTimeout(async () => {
    if (!state.session) return;
    try {
      const data = await api(`/v1/sessions/${enc(state.session.id)}/approvals`);
      approvals.sync(data.pending || []);
    } catch { /* the list stays as it was; the next event asks again */ }
  }, 30);
}

function onEvent(ev) {
  const live = ev.ts * 1000 >= state.openedAt - 50;
  switch (ev.kind) {
    case "message_sent":
      traffic.sent(ev, live);
      topology.count(ev.channel, ev.sender, ev.delivered_to);
      break;
    case "message_refused":
      traffic.refused(ev, live);
      break;
    case "transcript": {
      const e = ev.entry;
      if (e.kind === "tool_call" && e.name) {  // a send call: `send_<channel>` (or the channel)
        const ch = state.team?.channels.find((c) => e.name === `send_${c.name}` || e.name === c.name);
        if (ch) traffic.expect(ev.creature, ch.name, e.data?.args);
      }
      if (e.kind === "message_in" && e.data?.message_id) traffic.delivered(e.data.message_id, e.text);
      if (e.kind === "tool_call") refreshApprovals();  // it may wait for a yes or an answer
      transcripts.add(ev.creature, e);
      break;
    }
    case "prompt":
      prompt.event(ev);
      break;
    case "creature_state": {
      const node = document.querySelector(`#topology [data-creature="${CSS.escape(ev.creature)}"]`);
      if (node) node.dataset.state = ev.state;
      break;
    }
    case "approval_requested":
    case "approval_decided":
      refreshApprovals();
      break;
    default:
      break;
  }
  charts.event(ev);
}

setInterval(() => { if (state.view === "charts") charts.draw(); }, 500);
// a question or approval raised while the stream was down is still found
setInterval(() => { if (state.session && document.visibilityState === "visible") refreshApprovals(); }, 3000);

// ---- transcripts ----------------------------------------------------------------------
// Built from the session's transcript events: the stream replays them from the first, so
// the transcript endpoint is not needed (and a copy fetched while the replay runs would
// show its lines twice).
function loadTranscript() {
  transcripts.show();
}

// ---- start ----------------------------------------------------------------------------
async function start() {
  composer.enable(false);
  voice.setSession(null);
  try {
    state.team = await api("/v1/team");
  } catch (exc) {
    sessionError(`The team cannot be read: ${exc.message}`);
    return;
  }
  document.title = `${state.team.name} · terrarium`;
  $("#team-name").textContent = state.team.name;
  for (const v of [topology, traffic, transcripts, composer, prompt]) {
    if (v === topology) v.render(state.team); else v.setTeam(state.team);
  }
  composer.enable(false);
  const wanted = new URLSearchParams(location.hash.slice(1)).get("session");
  if (wanted) {
    try {
      await openSession(await api(`/v1/sessions/${enc(wanted)}`), false);
    } catch { history.replaceState(null, "", location.pathname); }
  }
  loadSessions();
}
start();
