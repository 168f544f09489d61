// AudioWorklet: the microphone at the context's rate → 16 kHz mono PCM16 frames of 20 ms.
// Each output sample is the mean of the input samples it covers (a box low-pass, enough
// against aliasing for speech going to VAD and transcription); the frame's RMS goes along
// for the level meter and barge-in.
const OUT_RATE = 16000;
const FRAME = 320;

class Downsampler extends AudioWorkletProcessor {
  constructor() {
    super();
    this.step = sampleRate / OUT_RATE; // input samples per output sample
    this.acc = 0;
    this.count = 0;
    this.pos = 0;
    this.frame = new Int16Array(FRAME);
    this.n = 0;
    this.energy = 0;
  }

  process(inputs) {
    const ch = inputs[0] && inputs[0][0];
    if (!ch) return true;
    for (let i = 0; i < ch.length; i++) {
      this.acc += ch[i];
      this.count += 1;
      this.pos += 1;
      if (this.pos >= this.step) {
        this.pos -= this.step;
        const v = Math.max(-1, Math.min(1, this.acc / this.count));
        this.acc = 0;
        this.count = 0;
        this.energy += v * v;
        this.frame[this.n++] = v < 0 ? v * 0x8000 : v * 0x7fff;
        if (this.n === FRAME) {
          const out = this.frame;
          this.port.postMessage({ pcm: out.buffer, rms: Math.sqrt(this.energy / FRAME) }, [out.buffer]);
          this.frame = new Int16Array(FRAME);
          this.n = 0;
          this.energy = 0;
        }
      }
    }
    return true;
  }
}

registerProcessor("terrarium-downsampler", Downsampler);
