// Voice in the browser: the talk button opens the microphone (getUserMedia), an AudioWorklet
// turns it into 16 kHz PCM16 frames for the session's audio socket, and the reply's PCM16
// frames are played as they arrive. Speaking over the reply stops it at once here (the
// server also cuts it and says "barge_in"). Heard and said lines go to the voice log.
import { h, clock } from "./dom.js";
import { wsUrl } from "./api.js";

const BARGE_RMS = 0.04; // a frame this loud while the reply plays counts as speech
const BARGE_FRAMES = 8; // 160 ms of it in a row interrupts

export const voiceStats = (window.terrariumVoice ||= {
  framesMade: 0, framesSent: 0, playedSeconds: 0, scheduledSeconds: 0, heard: [], said: [], bargeIns: 0, serverBargeIns: 0,
});

export class Voice {
  constructor(button, status, meter, log, onFirstAudio) {
    this.button = button;
    this.status = status;
    this.meter = meter;
    this.log = log;
    this.onFirstAudio = onFirstAudio;
    this.session = null;
    this.sources = new Set();
    button.addEventListener("click", () => (this.on ? this.stop() : this.start()));
  }

  setSession(id) {
    if (this.on) this.stop();
    this.session = id;
    this.button.disabled = !id;
  }

  say(text) { this.status.textContent = text; }

  async start() {
    if (!this.session) return;
    if (!navigator.mediaDevices?.getUserMedia) { this.say("this browser gives no microphone"); return; }
    this.on = true;
    this.button.setAttribute("aria-pressed", "true");
    this.button.textContent = "■ Stop";
    try {
      this.stream = await navigator.mediaDevices.getUserMedia({
        audio: { channelCount: 1, echoCancellation: true, noiseSuppression: true },
      });
      this.ctx = new AudioContext();
      await this.ctx.audioWorklet.addModule(new URL("./pcm-worklet.js", import.meta.url));
      const src = this.ctx.createMediaStreamSource(this.stream);
      this.node = new AudioWorkletNode(this.ctx, "terrarium-downsampler");
      src.connect(this.node);
      this.sock = new WebSocket(wsUrl(`/v1/sessions/${encodeURIComponent(this.session)}/audio`));
      this.sock.binaryType = "arraybuffer";
      this.sock.onmessage = (m) => this.received(m.data);
      this.sock.onclose = () => { if (this.on) this.stop("the audio socket closed"); };
      this.sock.onopen = () => this.say("listening — speak");
      this.loud = 0;
      this.node.port.onmessage = ({ data }) => this.frame(data);
    } catch (exc) {
      this.stop(`microphone unavailable: ${exc.message || exc.name}`);
    }
  }

  frame({ pcm, rms }) {
    this.meter.value = Math.min(1, rms * 4);
    voiceStats.framesMade += 1;
    if (this.sock?.readyState === WebSocket.OPEN) {
      this.sock.send(pcm);
      voiceStats.framesSent += 1;
    }
    if (this.sources.size && rms > BARGE_RMS) {
      if (++this.loud >= BARGE_FRAMES) this.bargeIn("you spoke over the reply");
    } else this.loud = 0;
  }

  received(data) {
    if (typeof data !== "string") { this.play(new Int16Array(data)); return; }
    let msg;
    try { msg = JSON.parse(data); } catch { return; }
    if (msg.type === "start") { this.rate = msg.sample_rate; this.playhead = 0; this.firstAudioSeen = false; }
    else if (msg.type === "heard") {
      voiceStats.heard.push(msg.text);
      this.line("heard", msg.text);
      this.say("thinking…");
    } else if (msg.type === "sentence") {
      voiceStats.said.push(msg.text);
      const ms = msg.first_audio_ms;
      this.line("said", msg.text, ms != null ? `first audio ${Math.round(ms)} ms` : "");
      if (ms != null) this.onFirstAudio(ms);
      this.say("speaking");
    } else if (msg.type === "end") this.say("listening — speak");
    else if (msg.type === "barge_in") {
      voiceStats.serverBargeIns += 1;
      this.bargeIn("interrupted");
    }
    else if (msg.type === "error") {
      this.line("error", msg.message || "the server could not hear this");
      this.say("the server reported a problem");
    }
  }

  line(kind, text, extra = "") {
    this.log.append(h("li", { class: kind },
      h("div", { class: "head" }, h("span", { class: "kind", text: kind }),
        h("span", { class: "time", text: clock(Date.now() / 1000) }), extra ? h("span", { class: "muted", text: extra }) : null),
      h("div", { class: "body", text })));
    this.log.scrollTop = this.log.scrollHeight;
  }

  play(samples) {
    if (!this.ctx || !samples.length) return;
    const rate = this.rate || 22050;
    const buf = this.ctx.createBuffer(1, samples.length, rate);
    const ch = buf.getChannelData(0);
    for (let i = 0; i < samples.length; i++) ch[i] = samples[i] / 0x8000;
    const node = this.ctx.createBufferSource();
    node.buffer = buf;
    node.connect(this.ctx.destination);
    const at = Math.max(this.ctx.currentTime + 0.02, this.playhead || 0);
    node.start(at);
    node.at = at;
    this.playhead = at + buf.duration;
    voiceStats.scheduledSeconds += buf.duration;
    this.sources.add(node);
    node.onended = () => {
      if (this.sources.delete(node) && !node.cut) voiceStats.playedSeconds += buf.duration;
    };
  }

  bargeIn(why) {
    if (!this.sources.size) return;
    voiceStats.bargeIns += 1;
    const now = this.ctx ? this.ctx.currentTime : 0;
    for (const n of this.sources) {
      n.cut = true;  // what of it was heard still counts as played
      voiceStats.playedSeconds += Math.max(0, Math.min(n.buffer.duration, now - n.at));
      try { n.stop(); } catch { /* not started */ }
    }
    this.sources.clear();
    this.playhead = 0;
    this.loud = 0;
    this.say(why);
  }

  stop(why = "microphone off") {
    this.on = false;
    this.button.setAttribute("aria-pressed", "false");
    this.button.textContent = "🎙 Talk";
    if (this.sock) {
      this.sock.onclose = null;
      // flush an utterance in progress, then hang up
      if (this.sock.readyState === WebSocket.OPEN) this.sock.send(JSON.stringify({ type: "end" }));
      this.sock.close();
      this.sock = null;
    }
    if (this.node) { this.node.port.onmessage = null; this.node.disconnect(); this.node = null; }
    if (this.stream) { for (const t of this.stream.getTracks()) t.stop(); this.stream = null; }
    if (this.ctx) { this.ctx.close(); this.ctx = null; }
    this.sources.clear();
    this.meter.value = 0;
    this.say(why);
  }
}
