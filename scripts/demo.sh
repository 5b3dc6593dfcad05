#!/usr/bin/env bash
# Fresh machine -> the embedded demo: baseline vs logical retrieval on a shipped corpus.
. "$(dirname "$0")/env.sh"
exec itlr demo "$@"
