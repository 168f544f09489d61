"""Piper TTS figures: first short sentence latency and real-time factor.

Run: ``python bench/tts.py [--runs N]``. Prints medians over N runs after a warm-up, and
ratios against baselines measured in the same run:

- first short sentence: our ``PiperSynthesizer`` vs piper's own ``PiperVoice.synthesize``
  (the wrapper's overhead), and time to first audio through ``TTSOutput`` (segmentation,
  speakable text, worker thread, queues) vs the bare synthesis call;
- paragraph: sentence-by-sentence streaming synthesis vs one whole-paragraph call.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import anyio

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from terrarium.voice import NullAudioSink, PiperSynthesizer, TTSOutput, split_sentences

SHORT = "Hello there."
PARAGRAPH = (
    "Good morning! Today will be mostly sunny with a light breeze from the west. "
    "Temperatures should reach about twenty one degrees by the afternoon. "
    "In the evening, clouds move in, and there is a small chance of rain after midnight. "
    "If you are going out tonight, bring a light jacket just in case. "
    "Tomorrow looks cooler, with showers likely in the morning."
)


def median_ms(samples: list[float]) -> str:
    return f"{statistics.median(samples) * 1000:7.1f} ms"


async def short_sentence_runs(
    synth: PiperSynthesizer, runs: int
) -> tuple[list[float], list[float], list[float]]:
    """Interleaved runs (baseline, wrapper, TTSOutput) so machine load hits all three alike.

    The TTSOutput figure is the time to first audio of a short reply streamed in two tokens.
    """
    voice = synth._voice  # piper's own object: the baseline
    raw: list[float] = []
    ours: list[float] = []
    ttfa: list[float] = []
    async with TTSOutput(synth, NullAudioSink()) as tts:
        for i in range(runs):
            t = time.perf_counter()
            list(voice.synthesize(SHORT))
            raw.append(time.perf_counter() - t)
            t = time.perf_counter()
            synth.synthesize(SHORT)
            ours.append(time.perf_counter() - t)
            uid = f"b{i}"
            await tts.begin(uid)
            for tok in (SHORT[:5], SHORT[5:]):
                await tts.write(tok)
            await tts.end()
            result = await tts.wait(uid)
            assert result.metrics.time_to_first_audio is not None
            ttfa.append(result.metrics.time_to_first_audio)
    return raw, ours, ttfa


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=15)
    args = parser.parse_args()
    runs = max(10, args.runs)

    synth = PiperSynthesizer()
    t = time.perf_counter()
    synth.load()
    print(f"voice load (once):                    {(time.perf_counter() - t) * 1000:7.1f} ms")
    for _ in range(3):  # warm-up: onnxruntime allocations, espeak data
        synth.synthesize(SHORT)
        synth.synthesize(PARAGRAPH)

    raw, ours, ttfa = anyio.run(short_sentence_runs, synth, runs)
    short_audio = synth.synthesize(SHORT).duration
    print(f"first short sentence {SHORT!r} ({short_audio:.2f} s audio), median of {runs}:")
    print(f"  piper PiperVoice.synthesize (baseline) {median_ms(raw)}")
    print(
        f"  PiperSynthesizer.synthesize            {median_ms(ours)}  "
        f"ratio {statistics.median(ours) / statistics.median(raw):.2f}x baseline"
    )
    print(
        f"  TTSOutput time to first audio          {median_ms(ttfa)}  "
        f"ratio {statistics.median(ttfa) / statistics.median(raw):.2f}x baseline, "
        f"framework share {(statistics.median(ttfa) - statistics.median(raw)) * 1000:.1f} ms"
    )

    sentences = split_sentences(PARAGRAPH)
    para_runs = max(5, runs // 3)
    whole_t, whole_audio, stream_t, stream_audio, first_t = [], 0.0, [], 0.0, []
    for _ in range(para_runs):
        t = time.perf_counter()
        whole_audio = synth.synthesize(PARAGRAPH).duration
        whole_t.append(time.perf_counter() - t)
        t = time.perf_counter()
        stream_audio = 0.0
        for k, s in enumerate(sentences):
            stream_audio += synth.synthesize(s).duration
            if k == 0:
                first_t.append(time.perf_counter() - t)
        stream_t.append(time.perf_counter() - t)
    rtf_whole = statistics.median(whole_t) / whole_audio
    rtf_stream = statistics.median(stream_t) / stream_audio
    print(
        f"paragraph: {len(PARAGRAPH)} chars, {len(sentences)} sentences, "
        f"{stream_audio:.2f} s audio, median of {para_runs}:"
    )
    print(
        f"  whole paragraph in one call (baseline) {median_ms(whole_t)}  RTF {rtf_whole:.3f} "
        f"({1 / rtf_whole:.1f}x faster than real time)"
    )
    print(
        f"  sentence by sentence (streaming)       {median_ms(stream_t)}  RTF {rtf_stream:.3f} "
        f"({1 / rtf_stream:.1f}x faster than real time), ratio "
        f"{statistics.median(stream_t) / statistics.median(whole_t):.2f}x baseline"
    )
    print(
        f"  first sentence ready after             {median_ms(first_t)}  vs whole paragraph "
        f"{median_ms(whole_t)} ({statistics.median(whole_t) / statistics.median(first_t):.1f}x "
        "sooner)"
    )


if __name__ == "__main__":
    main()
