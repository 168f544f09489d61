#!/usr/bin/env bash
# The test command: the whole suite, the embedded-model and Piper end-to-end tests included.
set -euo pipefail
cd "$(dirname "$0")/.."
. .venv/bin/activate
python -m pytest -p no:cacheprovider "$@"
