// Approvals and ask_user questions as dialogs: a shell call shows its command, an edit or
// multi_edit shows the change as a diff; the answer goes back over the API.
import { h } from "./dom.js";

/** Line diff of two texts (longest common subsequence; edits are small). */
export function lineDiff(a, b) {
  const x = a.split("\n"), y = b.split("\n");
  const n = x.length, m = y.length;
  const L = Array.from({ length: n + 1 }, () => new Uint32Array(m + 1));
  for (let i = n - 1; i >= 0; i--) for (let j = m - 1; j >= 0; j--) {
    L[i][j] = x[i] === y[j] ? L[i + 1][j + 1] + 1 : Math.max(L[i + 1][j], L[i][j + 1]);
  }
  const out = [];
  let i = 0, j = 0;
  while (i < n && j < m) {
    if (x[i] === y[j]) { out.push(["same", x[i]]); i++; j++; }
    else if (L[i + 1][j] >= L[i][j + 1]) out.push(["del", x[i++]]);
    else out.push(["add", y[j++]]);
  }
  while (i < n) out.push(["del", x[i++]]);
  while (j < m) out.push(["add", y[j++]]);
  return out;
}

function diffBox(path, edits) {
  return h("div", {},
    h("p", {}, "File ", h("code", { text: path || "?" })),
    edits.map((e, k) => h("div", { class: "diff", role: "group", "aria-label": `change ${k + 1} of ${edits.length}` },
      lineDiff(String(e.old_string ?? ""), String(e.new_string ?? "")).map(([t, line]) =>
        h("div", { class: t, text: line })))));
}

export function describe(item) {
  const a = item.args || {};
  if (item.kind === "question") {
    const choices = item.choices || [];
    return h("div", {}, h("p", { class: "question", text: item.question || "" }),
      choices.length ? h("p", { class: "muted", text: `Choices: ${choices.join(", ")}` }) : null);
  }
  if (item.tool === "shell" || typeof a.command === "string") {
    return h("div", {}, h("p", { text: "Command:" }), h("pre", { class: "command", text: a.command ?? "" }));
  }
  if (item.tool === "edit") return diffBox(a.path, [a]);
  if (item.tool === "multi_edit") return diffBox(a.path, a.edits || []);
  return h("pre", { text: JSON.stringify(a, null, 2) });
}

export class Approvals {
  constructor(dialog, list, none, answer) {
    this.dialog = dialog;
    this.list = list;
    this.none = none;
    this.answer = answer; // async (item, body) => void
    this.items = new Map();
    this.current = null;
    const $ = (id) => dialog.querySelector(`#${id}`);
    this.title = $("approval-title");
    this.what = $("approval-what");
    this.body = $("approval-body");
    this.answerRow = $("approval-answer-row");
    this.answerInput = $("approval-answer");
    this.err = $("approval-error");
    this.yes = $("approval-yes");
    this.no = $("approval-deny");
    this.yes.addEventListener("click", () => this.decide(true));
    this.no.addEventListener("click", () => this.decide(false));
    this.answerInput.addEventListener("keydown", (e) => {
      if (e.key === "Enter") { e.preventDefault(); this.decide(true); }
    });
    dialog.addEventListener("cancel", (e) => { e.preventDefault(); this.dismissed = true; this.hide(); });
  }

  /** The server's pending list (authoritative): add new ones, drop answered ones. */
  sync(pending) {
    const ids = new Set(pending.map((p) => p.id));
    for (const id of [...this.items.keys()]) if (!ids.has(id)) this.items.delete(id);
    for (const p of pending) {
      if (!this.items.has(p.id)) { this.items.set(p.id, p); this.dismissed = false; }
    }
    this.renderList();
    if (this.current && !this.items.has(this.current.id)) this.hide();
    if (!this.current && !this.dismissed && this.items.size) this.show(this.items.values().next().value);
  }

  clear() { this.items.clear(); this.hide(); this.renderList(); }

  renderList() {
    this.none.hidden = this.items.size > 0;
    this.list.replaceChildren(...[...this.items.values()].map((p) => h("li", {},
      h("span", { text: p.kind === "question" ? `${p.creature} asks` : `${p.creature}: ${p.tool}` }),
      h("button", { type: "button", onclick: () => { this.dismissed = false; this.show(p); },
        "aria-label": `Review ${p.kind === "question" ? "question" : p.tool} from ${p.creature}`, text: "Review" }))));
  }

  show(item) {
    this.current = item;
    const question = item.kind === "question";
    this.title.textContent = question ? `${item.creature} asks you` : `Allow ${item.tool}?`;
    this.what.textContent = question ? "" : `${item.creature} wants to run ${item.tool}.`;
    this.body.replaceChildren(describe(item));
    this.answerRow.hidden = !question;
    this.answerInput.value = "";
    const list = this.dialog.querySelector("#approval-choices");
    list.replaceChildren(...(item.choices || []).map((c) => h("option", { value: c })));
    this.yes.textContent = question ? "Answer" : "Approve";
    this.no.textContent = question ? "Decline" : "Deny";
    this.err.hidden = true;
    if (!this.dialog.open) this.dialog.showModal();
    (question ? this.answerInput : this.yes).focus();
  }

  hide() {
    this.current = null;
    if (this.dialog.open) this.dialog.close();
  }

  async decide(yes) {
    const item = this.current;
    if (!item) return;
    const body = item.kind === "question"
      ? { answer: yes ? this.answerInput.value : "" }
      : { approved: yes };
    this.yes.disabled = this.no.disabled = true;
    try {
      await this.answer(item, body);
      this.items.delete(item.id);
      this.hide();
      this.renderList();
      const next = this.items.values().next().value;
      if (next) this.show(next);
    } catch (exc) {
      this.err.hidden = false;
      this.err.textContent = exc.message;
    } finally {
      this.yes.disabled = this.no.disabled = false;
    }
  }
}
