// Small DOM helpers: build elements without innerHTML (payloads are never parsed as HTML).

export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k === "class") el.className = v;
    else if (k === "text") el.textContent = v;
    else if (k.startsWith("on")) el.addEventListener(k.slice(2), v);
    else el.setAttribute(k, v === true ? "" : String(v));
  }
  for (const c of children.flat()) {
    if (c === undefined || c === null || c === false) continue;
    el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return el;
}

const SVGNS = "http://www.w3.org/2000/svg";
export function s(tag, attrs = {}, ...children) {
  const el = document.createElementNS(SVGNS, tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null) continue;
    if (k === "text") el.textContent = v;
    else el.setAttribute(k, String(v));
  }
  for (const c of children.flat()) if (c) el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  return el;
}

export const $ = (sel, root = document) => root.querySelector(sel);

export function clock(ts) {
  const d = new Date(ts * 1000);
  return d.toLocaleTimeString([], { hour12: false }) + "." + String(d.getMilliseconds()).padStart(3, "0");
}

const FOLD = 160;
/** A value as text; a long one folded behind a summary that shows its start. */
export function foldable(value) {
  const text = (typeof value === "string" ? value : JSON.stringify(value, null, 2)).trimEnd();
  if (text.length <= FOLD && text.split("\n").length <= 3) return document.createTextNode(text);
  const first = text.split("\n")[0].slice(0, FOLD);
  return h("details", { class: "fold" }, h("summary", { text: `${first}… (${text.length} chars)` }),
    h("div", { text }));
}

/** Arrow keys, Home and End move between tabs (the WAI-ARIA tabs pattern). */
export function tabs(list, onSelect) {
  const all = () => [...list.querySelectorAll("[role=tab]")];
  const select = (tab, focus = true) => {
    for (const t of all()) {
      const on = t === tab;
      t.setAttribute("aria-selected", String(on));
      t.tabIndex = on ? 0 : -1;
      document.getElementById(t.getAttribute("aria-controls")).hidden = !on;
    }
    if (focus) tab.focus();
    onSelect(tab.id.replace(/^tab-/, ""));
  };
  list.addEventListener("click", (e) => {
    const tab = e.target.closest("[role=tab]");
    if (tab) select(tab);
  });
  list.addEventListener("keydown", (e) => {
    const ts = all();
    const i = ts.indexOf(document.activeElement);
    if (i < 0) return;
    const to = { ArrowRight: i + 1, ArrowLeft: i - 1, Home: 0, End: ts.length - 1 }[e.key];
    if (to === undefined) return;
    e.preventDefault();
    select(ts[(to + ts.length) % ts.length]);
  });
  return (name, focus = false) => select(document.getElementById(`tab-${name}`), focus);
}
