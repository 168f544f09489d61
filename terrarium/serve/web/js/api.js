// The serve API as the page uses it: JSON requests with problem details as errors, and the
// session's typed events over a WebSocket (SSE as the fallback), resumed from the last seq.

const params = new URLSearchParams(location.hash.slice(1));
if (params.get("token")) {
  localStorage.setItem("terrarium.token", params.get("token"));
  history.replaceState(null, "", location.pathname + location.search);
}
const token = () => localStorage.getItem("terrarium.token") || "";

/** An error answer of the API: ``problem`` is its RFC 9457 body. */
export class ProblemError extends Error {
  constructor(problem, status) {
    super(problem.detail || problem.title || `HTTP ${status}`);
    this.problem = problem;
    this.status = status;
  }
}

export async function api(path, { method = "GET", body, signal } = {}) {
  const headers = { Accept: "application/json" };
  if (body !== undefined) headers["Content-Type"] = "application/json";
  if (token()) headers.Authorization = `Bearer ${token()}`;
  const res = await fetch(path, {
    method, headers, signal, body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (res.status === 204) return null;
  const text = await res.text();
  let data = null;
  try { data = text ? JSON.parse(text) : null; } catch { data = { detail: text }; }
  if (!res.ok) throw new ProblemError(data || {}, res.status);
  return data;
}

export function withToken(url) {
  if (!token()) return url;
  return url + (url.includes("?") ? "&" : "?") + "token=" + encodeURIComponent(token());
}

export function wsUrl(path) {
  const proto = location.protocol === "https:" ? "wss:" : "ws:";
  return withToken(`${proto}//${location.host}${path}`);
}

// Every event kind the runtime emits (SSE delivers named events only to named listeners).
const KINDS = [
  "creature_state", "message_sent", "message_delivered", "message_refused", "turn_started",
  "turn_ended", "error", "restart", "output_text", "transcript", "prompt", "run_started",
  "run_ended", "message_consumed", "speech_cut", "sentence_queued", "sentence_synthesized",
  "utterance_written", "approval_requested", "approval_decided", "missed", "plugin_failed",
  "trigger_fired", "subagent_started", "subagent_ended", "fold_summarized", "job_started",
  "job_ended", "model_loading", "model_loaded", "creature_warming", "prefix_restored",
  "prefix_cache_problem", "creature_warmed", "team_ready", "message", "reasoning",
  "creature_waiting",
];

/**
 * Follow a session's events from ``after``: ``onEvent(ev)`` once per event in seq order
 * (a reconnect resumes after the last seq seen, so none is lost or repeated);
 * ``onState(text)`` with "live", "reconnecting" or "offline". Returns ``close()``.
 */
export function followEvents(sessionId, after, onEvent, onState, stillThere = async () => true) {
  let last = after;
  let closed = false;
  let sock = null;
  let source = null;
  let failures = 0;
  let timer = null;
  const base = `/v1/sessions/${encodeURIComponent(sessionId)}/events`;
  const deliver = (ev) => {
    if (typeof ev.seq === "number") {
      if (ev.seq <= last) return;
      last = ev.seq;
    }
    onEvent(ev);
  };
  const retry = async () => {
    if (closed) return;
    onState("reconnecting");
    failures += 1;
    // a session deleted elsewhere is not knocked on forever
    if (failures >= 2 && !(await stillThere().catch(() => true))) { onState("gone"); return; }
    timer = setTimeout(open, Math.min(5000, 250 * 2 ** Math.min(failures, 4)));
  };
  const openSse = () => {
    source = new EventSource(withToken(`${base}?after=${last}`));
    const handle = (m) => { failures = 0; try { deliver(JSON.parse(m.data)); } catch { /* not JSON */ } };
    for (const k of KINDS) source.addEventListener(k, handle);
    source.onopen = () => onState("live");
    source.onerror = () => { source.close(); source = null; retry(); };
  };
  const open = () => {
    if (closed) return;
    if (!("WebSocket" in window) || failures > 2) { openSse(); return; }
    sock = new WebSocket(wsUrl(`${base}/ws?after=${last}`));
    sock.onopen = () => { onState("live"); };
    sock.onmessage = (m) => {
      failures = 0;
      if (typeof m.data !== "string") return;
      let ev;
      try { ev = JSON.parse(m.data); } catch { return; }
      deliver(ev);
    };
    sock.onclose = () => { sock = null; retry(); };
    sock.onerror = () => { /* onclose follows */ };
  };
  open();
  return {
    close() {
      closed = true;
      clearTimeout(timer);
      if (sock) { sock.onclose = null; sock.close(); }
      if (source) source.close();
      onState("offline");
    },
    get last() { return last; },
  };
}
