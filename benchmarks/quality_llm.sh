#!/usr/bin/env bash
# The quality benchmark with its LLM rows (Reasoning rewrite, ITLR LLM-translated), in one command:
#
#   bash benchmarks/quality_llm.sh [quality.py options, e.g. --datasets scifact --llm-max-queries 60 --quick]
#
#   1. python benchmarks/quality.py --dump-queries $LLM_DIR ...   (.venv: a fixed, family-stratified subsample
#      of at most --llm-max-queries test queries per dataset -> $LLM_DIR/<dataset>.jsonl)
#   2. itlr translate $LLM_DIR/<dataset>.jsonl -o $LLM_DIR/<dataset>.{logical,rewrite}.arrow
#      --translator $TRANSLATOR --mode {logical,rewrite}        (vllm: the vLLM virtualenv; llamacpp: .venv)
#   3. python benchmarks/quality.py --llm-translations $LLM_DIR ...  (.venv: the normal outputs plus the LLM rows)
#
# Environment:
#   TRANSLATOR  vllm (default) or llamacpp: the real CPU translator, e.g. the issue-11 rerun
#                 TRANSLATOR=llamacpp MODEL=qwen2.5-coder-1.5b bash benchmarks/quality_llm.sh
#               (needs `pip install -e '.[llamacpp]'` in .venv and `itlr models install qwen2.5-coder-1.5b`)
#   MODEL       model for vLLM: a local Hugging Face folder or .gguf (default: the bundled SmolLM2-135M-Instruct,
#               a smoke-test model).  On a GPU machine: MODEL=/path/to/hf-model bash benchmarks/quality_llm.sh
#   VLLM_VENV   the vLLM virtualenv (default .venv-vllm, made by scripts/install_vllm_cpu.sh)
#   PYTHON      the project's python (default .venv/bin/python)
#   LLM_DIR     queries and translations (default: benchmarks/results/quality/llm for the committed run's translator,
#               TRANSLATOR=llamacpp MODEL=qwen2.5-coder-1.5b; for any other, itlr-quality-llm-trial in the temporary
#               folder, with the report in its report/ unless --out is given, so that a smoke run never replaces
#               the committed translations or report)
#   TRANSLATE_ARGS  extra `itlr translate` options for both modes (e.g. "--dtype bfloat16 --gpu-memory-utilization 0.8")
#   LOGICAL_ARGS    extra options of the logical mode only (--examples, --nearest, --terms, --repair: a rewrite refuses them)
# Translations are cached (translations.sqlite in the cache folder): a rerun translates nothing twice.
# After a change of the rules or of their repair, without the cache or the model:
#   python benchmarks/quality/repair_translations.py $LLM_DIR   (then step 3 alone)
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
PY=${PYTHON:-$ROOT/.venv/bin/python}
VLLM_VENV=${VLLM_VENV:-$ROOT/.venv-vllm}
TRANSLATOR=${TRANSLATOR:-vllm}
MODEL=${MODEL:-}
OUT_ARGS=()
if [ -z "${LLM_DIR:-}" ]; then
  if [ "$TRANSLATOR" = llamacpp ] && [ "$MODEL" = qwen2.5-coder-1.5b ]; then
    LLM_DIR=benchmarks/results/quality/llm   # the committed translations' run
  else
    LLM_DIR=${TMPDIR:-/tmp}/itlr-quality-llm-trial
    case " $* " in *" --out "*|*" --out="*) ;; *) OUT_ARGS=(--out "$LLM_DIR/report") ;; esac
  fi
fi
mkdir -p "$LLM_DIR"
read -r -a EXTRA <<< "${TRANSLATE_ARGS:-}"
read -r -a LOGICAL <<< "${LOGICAL_ARGS:-}"
start=$(date +%s)

step() { echo "[quality_llm $(( $(date +%s) - start ))s] $*"; }
run() { printf '+'; printf ' %q' "$@"; printf '\n'; "$@"; }

[ -x "$PY" ] || { echo "quality_llm: $PY not found (bash scripts/env.sh creates .venv)" >&2; exit 2; }
if [ "$TRANSLATOR" = llamacpp ]; then
  TPY=$PY
else
  TPY=$VLLM_VENV/bin/python
  [ -x "$TPY" ] || {
    echo "quality_llm: $TPY not found (bash scripts/install_vllm_cpu.sh creates it)" >&2; exit 2; }
fi
export PYTHONUNBUFFERED=1

step "1/3 dumping the subsampled test queries into $LLM_DIR"
rm -f "$LLM_DIR/datasets.txt"
run "$PY" benchmarks/quality.py "$@" --dump-queries "$LLM_DIR"

mapfile -t DATASETS < "$LLM_DIR/datasets.txt"
model_args=()
if [ -n "$MODEL" ]; then
  model_args=(--model "$MODEL")
fi
for name in "${DATASETS[@]}"; do
  [ -n "$name" ] || continue
  for mode in logical rewrite; do
    only=()
    if [ "$mode" = logical ]; then only=("${LOGICAL[@]}"); fi
    step "2/3 translating $name ($(wc -l < "$LLM_DIR/$name.jsonl") queries, $mode mode, $TRANSLATOR model ${MODEL:-default})"
    run "$TPY" -m itlr_gpu.cli translate "$LLM_DIR/$name.jsonl" -o "$LLM_DIR/$name.$mode.arrow" \
      --translator "$TRANSLATOR" --mode "$mode" "${model_args[@]}" "${EXTRA[@]}" "${only[@]}"
  done
done

step "3/3 running the benchmark with the LLM rows"
run "$PY" benchmarks/quality.py "$@" "${OUT_ARGS[@]}" --llm-translations "$LLM_DIR"
step "done"
