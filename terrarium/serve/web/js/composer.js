// The composer: a form generated from the input channel's schema (enum → select, bool →
// checkbox, int/float → number with its bounds, multiline → textarea, list/object → JSON).
// Required fields are enforced here; whatever the server refuses (422) is shown inline with
// its own sentence, next to the field it names.
import { h } from "./dom.js";

function control(f, id) {
  const common = { id, name: f.name, "aria-describedby": `${id}-hint ${id}-err` };
  if (f.enum) {
    return h("select", { ...common, required: f.required },
      f.required ? null : h("option", { value: "", text: "(none)" }),
      f.enum.map((v) => h("option", { value: String(v), text: String(v) })));
  }
  if (f.type === "bool") return h("input", { ...common, type: "checkbox" });
  if (f.type === "int" || f.type === "float") {
    return h("input", { ...common, type: "number", inputmode: f.type === "int" ? "numeric" : "decimal",
      step: f.type === "int" ? "1" : "any", min: f.minimum ?? undefined, max: f.maximum ?? undefined,
      required: f.required });
  }
  const structured = /^(list|object)/.test(f.type);
  if (f.multiline || structured) {
    return h("textarea", { ...common, required: f.required, rows: structured ? 3 : 4,
      placeholder: structured ? "JSON" : undefined });
  }
  return h("input", { ...common, type: "text", required: f.required, autocomplete: "off" });
}

function read(f, el) {
  if (f.type === "bool") return el.checked;
  const raw = el.value;
  if (raw === "") return undefined;
  if (f.type === "int" || f.type === "float") return Number(raw);
  if (/^(list|object)/.test(f.type)) {
    try { return JSON.parse(raw); } catch { throw new Error(`${f.name}: not valid JSON`); }
  }
  return raw;
}

export class Composer {
  constructor(form, fieldsBox, errorBox, okBox, channelLine, send) {
    this.form = form;
    this.box = fieldsBox;
    this.error = errorBox;
    this.ok = okBox;
    this.channelLine = channelLine;
    this.send = send; // async (payload) => result; throws ProblemError
    this.fields = [];
    form.addEventListener("submit", (e) => { e.preventDefault(); this.submit(); });
  }

  setTeam(topo) {
    const ch = topo.channels.find((c) => c.name === topo.input_channel);
    this.channel = ch ? ch.name : null;
    this.fields = ch && ch.schema ? ch.schema.fields
      : [{ name: "text", type: "str", required: true, multiline: true, description: "What to say." }];
    this.channelLine.textContent = this.channel
      ? `to channel ${this.channel}${ch.schema ? ` (${ch.schema.name})` : ""}${ch.description ? ": " + ch.description : ""}`
      : "to the team";
    this.box.replaceChildren(...this.fields.map((f) => {
      const id = `f-${f.name}`;
      const input = control(f, id);
      const bounds = [f.minimum != null ? `≥ ${f.minimum}` : "", f.maximum != null ? `≤ ${f.maximum}` : ""].filter(Boolean).join(", ");
      const hint = [f.description, bounds, f.required ? "required" : "optional"].filter(Boolean).join(" · ");
      const label = h("label", { for: id }, f.name, f.required ? h("span", { "aria-hidden": "true", text: " *" }) : null);
      const wrap = f.type === "bool"
        ? h("div", { class: "field" }, h("label", { class: "check", for: id }, input, ` ${f.name}`))
        : h("div", { class: "field" }, label, input);
      wrap.append(h("div", { class: "hint", id: `${id}-hint`, text: hint }),
        h("div", { class: "ferr", id: `${id}-err`, role: "alert" }));
      return wrap;
    }));
  }

  enable(on) {
    for (const el of this.form.elements) el.disabled = !on;
    document.getElementById("composer-closed").hidden = on;
  }

  showErrors(message, fieldErrors = []) {
    for (const f of this.fields) {
      const el = this.form.elements.namedItem(f.name);
      const err = document.getElementById(`f-${f.name}-err`);
      const mine = fieldErrors.filter((e) => e.field === f.name || e.field?.split(".").pop() === f.name);
      if (el) el.setAttribute("aria-invalid", String(mine.length > 0));
      if (err) err.textContent = mine.map((e) => e.message).join("; ");
    }
    this.error.hidden = !message;
    this.error.textContent = message || "";
  }

  async submit() {
    this.ok.textContent = "";
    const payload = {};
    const missing = [];
    try {
      for (const f of this.fields) {
        const el = this.form.elements.namedItem(f.name);
        const v = read(f, el);
        if (v === undefined || (typeof v === "string" && f.required && !v.trim())) {
          if (f.required) missing.push({ field: f.name, message: "this field is required" });
          continue;
        }
        if (typeof v === "number" && Number.isNaN(v)) {
          missing.push({ field: f.name, message: "must be a number" });
          continue;
        }
        if (typeof v === "number" && ((f.minimum != null && v < f.minimum) || (f.maximum != null && v > f.maximum)
            || (f.type === "int" && !Number.isInteger(v)))) {
          const range = [f.minimum != null ? `at least ${f.minimum}` : "", f.maximum != null ? `at most ${f.maximum}` : ""].filter(Boolean).join(" and ");
          missing.push({ field: f.name, message: `must be ${f.type === "int" ? "a whole number" : "a number"}${range ? " " + range : ""}` });
          continue;
        }
        payload[f.name] = v;
      }
    } catch (exc) {
      this.showErrors(exc.message);
      return;
    }
    if (missing.length) {
      this.showErrors(`Check ${missing.map((m) => m.field).join(", ")}.`, missing);
      this.form.elements.namedItem(missing[0].field)?.focus();
      return;
    }
    this.showErrors("");
    const button = this.form.querySelector("button[type=submit]");
    button.disabled = true;
    try {
      await this.send(this.channel, payload);
      this.ok.textContent = "sent";
      for (const f of this.fields) {
        const el = this.form.elements.namedItem(f.name);
        if (f.type !== "bool" && !f.enum && el) el.value = "";
      }
    } catch (exc) {
      const p = exc.problem || {};
      this.showErrors(p.detail || p.title || exc.message, p.errors || []);
      const first = (p.errors || [])[0];
      if (first) this.form.elements.namedItem(first.field)?.focus();
    } finally {
      button.disabled = false;
    }
  }
}
