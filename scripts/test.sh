#!/usr/bin/env bash
# The test command: the whole suite, the embedded-model and Piper end-to-end tests included.
# `--fast` first leaves out the real model, the real voice and the browser
# (-m "not embedded and not tts and not browser"); any other arguments go to pytest.
set -euo pipefail
cd "$(dirname "$0")/.."
. .venv/bin/activate
if [[ "${1:-}" == "--fast" ]]; then
  shift
  set -- -m "not embedded and not tts and not browser" "$@"
fi
python -m pytest -p no:cacheprovider "$@"
