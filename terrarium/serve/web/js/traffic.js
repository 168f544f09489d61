// Live traffic: one row per message sent (or refused), its payload's fields in the
// channel's schema order, long values folded. Rows are added once per animation frame so
// a burst of events costs one layout; each row's latency (event time → on screen) is kept
// in window.terrariumMetrics for the browser tests' figures.
import { h, clock, foldable } from "./dom.js";

const MAX_ROWS = 1000;

export const metrics = (window.terrariumMetrics ||= { rowLatencyMs: [], clientMs: [], rows: 0 });

export class TrafficView {
  constructor(list, filter, follow, counter) {
    this.list = list;
    this.filter = filter;
    this.follow = follow;
    this.counter = counter;
    this.pending = [];
    this.byMessage = new Map(); // message_id -> payload cell
    this.early = new Map(); // message_id -> the receiver's text, come before its row
    this.payloads = new Map(); // "sender|channel" -> [payload...] (from send tool calls)
    this.total = 0;
    this.frame = 0;
    filter.addEventListener("change", () => this.applyFilter());
  }

  setTeam(topo) {
    this.topo = topo;
    const keep = this.filter.value;
    this.filter.replaceChildren(h("option", { value: "", text: "all channels" }),
      ...topo.channels.map((c) => h("option", { value: c.name, text: c.name })));
    this.filter.value = keep;
  }

  clear() {
    this.list.replaceChildren();
    this.byMessage.clear();
    this.early.clear();
    this.payloads.clear();
    this.pending = [];
    this.total = 0;
    this.counter.textContent = "";
  }

  /** A payload about to be sent by ``sender`` on ``channel`` (a send call, or the composer). */
  expect(sender, channel, payload) {
    const key = `${sender}|${channel}`;
    if (!this.payloads.has(key)) this.payloads.set(key, []);
    this.payloads.get(key).push(payload);
  }

  unexpect(sender, channel, payload) {
    const q = this.payloads.get(`${sender}|${channel}`) || [];
    const i = q.indexOf(payload);
    if (i >= 0) q.splice(i, 1);
  }

  sent(ev, live) {
    let payload = ev.payload;
    if (payload === undefined) payload = (this.payloads.get(`${ev.sender}|${ev.channel}`) || []).shift();
    this.pending.push({ ev, payload, live, got: performance.now() });
    this.schedule();
  }

  refused(ev, live) {
    this.pending.push({ ev, refused: true, live });
    this.schedule();
  }

  /** The receiver's rendering of a message we had no payload for. */
  delivered(messageId, text) {
    const cell = this.byMessage.get(messageId);
    if (!cell) {
      this.early.set(messageId, text);
      if (this.early.size > 500) this.early.delete(this.early.keys().next().value);
    } else if (!cell.dataset.filled) {
      cell.dataset.filled = "1";
      cell.replaceChildren(foldable(text));
    }
  }

  schedule() {
    if (!this.frame) this.frame = requestAnimationFrame(() => this.flush());
  }

  flush() {
    this.frame = 0;
    const batch = this.pending;
    this.pending = [];
    const chosen = this.filter.value;
    const frag = document.createDocumentFragment();
    const live = [];
    for (const item of batch) {
      const li = this.row(item);
      if (chosen && li.dataset.channel !== chosen) li.hidden = true;
      frag.append(li);
      if (item.live) live.push(item);
    }
    this.list.append(frag);
    this.total += batch.length;
    while (this.list.childElementCount > MAX_ROWS) {
      const gone = this.list.firstElementChild;
      this.byMessage.delete(gone.dataset.message);
      gone.remove();
    }
    this.counter.textContent = `${this.total} messages`;
    if (this.follow.checked) this.list.scrollTop = this.list.scrollHeight;
    if (live.length) {
      // measured once the frame that shows the rows has been painted
      setTimeout(() => {
        const t = performance.now();
        const now = performance.timeOrigin + t;
        for (const item of live) {
          metrics.rowLatencyMs.push(now - item.ev.ts * 1000);  // from the event's creation
          if (item.got !== undefined) metrics.clientMs.push(t - item.got);  // from its arrival
        }
        metrics.rows += live.length;
      }, 0);
    }
  }

  row({ ev, payload, refused }) {
    if (refused) {
      return h("li", { class: "refused", "data-channel": ev.channel },
        h("div", { class: "head" }, h("span", { class: "time", text: clock(ev.ts) }),
          h("span", { class: "ch", text: ev.channel }),
          h("span", { text: `${ev.sender} — refused` })),
        h("div", { class: "refused", text: ev.reason }));
    }
    const to = (ev.delivered_to || []).join(", ") || "nobody";
    const cell = h("div", { class: "payload-box" });
    if (payload !== undefined && payload !== null) {
      cell.dataset.filled = "1";
      cell.append(this.payload(ev.channel, payload));
    } else if (this.early.has(ev.message_id)) {
      cell.dataset.filled = "1";
      cell.append(foldable(this.early.get(ev.message_id)));
      this.early.delete(ev.message_id);
    }
    this.byMessage.set(ev.message_id, cell);
    return h("li", { "data-channel": ev.channel, "data-message": ev.message_id },
      h("div", { class: "head" }, h("span", { class: "time", text: clock(ev.ts) }),
        h("span", { class: "ch", text: ev.channel }),
        h("span", { text: `${ev.sender} → ${to}` })),
      cell);
  }

  payload(channel, payload) {
    if (typeof payload !== "object" || Array.isArray(payload)) return h("div", {}, foldable(payload));
    const ch = this.topo?.channels.find((c) => c.name === channel);
    const order = ch?.schema ? ch.schema.fields.map((f) => f.name) : [];
    const keys = [...order.filter((k) => k in payload), ...Object.keys(payload).filter((k) => !order.includes(k))];
    return h("dl", { class: "payload" }, keys.flatMap((k) => [h("dt", { text: k }), h("dd", {}, foldable(payload[k]))]));
  }

  applyFilter() {
    const chosen = this.filter.value;
    for (const li of this.list.children) li.hidden = !!chosen && li.dataset.channel !== chosen;
  }
}
