#!/usr/bin/env bash
# Fresh machine -> the whole test suite (no GPU, no network, no ../shared needed).
. "$(dirname "$0")/env.sh"
cd "$ROOT"
exec python -m pytest -q "$@"
