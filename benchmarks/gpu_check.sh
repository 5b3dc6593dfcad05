#!/usr/bin/env bash
# The GPU proof in one call (sized for < 8 minutes on one H200): GPU tests, then the kernel benchmark, a short table.
#
#   bash benchmarks/gpu_check.sh              # on a CUDA machine
#   bash benchmarks/gpu_check.sh --dry-run    # anywhere: the same steps at tiny sizes (Triton's interpreter)
#
# Needs only python3 with torch, triton, numpy and pytest (pyarrow, hypothesis optional); the repository need
# not be installed: it runs from this source checkout (PYTHONPATH=.; itlr_gpu finds kernels/ itself).
# Everything goes to one folder: $1 after the flags, else $OUT if set, else benchmarks/results/gpu/ (with --dry-run:
# a folder in the system's temporary directory, so that a smoke run never replaces a GPU run's committed evidence):
#   env.txt            python / torch / triton / GPU (nvidia-smi)
#   pytest.log, pytest.xml        pytest -m gpu (the kernel vs the torch reference on CUDA, every family and
#                                 option; --backend auto's rule; the out-of-core path's pinned buffers and copy stream)
#   pytest-per-step.log           the same tests with the kernel's per-step form (ITLR_PUSH_BATCH=0)
#   gpu_kernel.{json,md}, gpu_kernel.log    benchmarks/gpu_kernel.py (rows whose packages are missing are
#                                 skipped with a note; the JSON is rewritten after every row, so a timeout keeps
#                                 what finished)
#   ncu-push-batched.csv, ncu-per-step.csv    Nsight Compute of one launch of each form (N = 1M, k = 10)
#   summary.md         the short table printed last
# Each step has its own time limit (PYTEST_S, BENCH_S, NCU_S seconds); a step that fails does not stop the next
# one; the exit status is non-zero if any step failed.  QUICK=1: the default form's GPU tests and the benchmark
# only (no second test pass with the per-step form, no profile).
set -u
cd "$(dirname "$0")/.."
ROOT=$(pwd)
DRY=0
if [ "${1:-}" = "--dry-run" ]; then DRY=1; shift; fi
if [ $DRY = 1 ]; then DEFAULT_DEST=${TMPDIR:-/tmp}/itlr-gpu-check-dry-run; else DEFAULT_DEST=$ROOT/benchmarks/results/gpu; fi
DEST=${1:-${OUT:-$DEFAULT_DEST}}
PY=${PYTHON:-python3}
# Without a GPU (and without --dry-run) nothing is written: a run here would replace a GPU run's evidence with
# skipped tests and a failed benchmark.
if [ $DRY = 0 ] && ! "$PY" -c "import sys, torch; sys.exit(0 if torch.cuda.is_available() else 1)" 2>/dev/null; then
  echo "gpu_check: no CUDA GPU here (torch sees none); nothing written to $DEST (on a CPU: --dry-run)" >&2
  exit 1
fi
mkdir -p "$DEST"
DEST=$(cd "$DEST" && pwd)
export PYTHONPATH="$ROOT${PYTHONPATH:+:$PYTHONPATH}"
export PYTHONDONTWRITEBYTECODE=1
PYTEST_S=${PYTEST_S:-210}
BENCH_S=${BENCH_S:-260}
if [ $DRY = 1 ]; then   # the interpreter on a small shared CPU: generous limits (the GPU limits are above)
  PYTEST_S=${DRY_PYTEST_S:-600}
  BENCH_S=${DRY_BENCH_S:-1500}
fi
T0=$(date +%s)
status=0

{
  echo "date: $(date -u '+%Y-%m-%d %H:%M:%S UTC')"
  echo "commit: $(git rev-parse --short HEAD 2>/dev/null || echo unknown)"
  "$PY" - <<'PYEOF'
import importlib, platform
print("python", platform.python_version())
for name in ("torch", "triton", "numpy", "pyarrow", "pytest", "hypothesis", "faiss", "sentence_transformers"):
    try:
        print(name, getattr(importlib.import_module(name), "__version__", "?"))
    except Exception as exc:
        print(name, "MISSING", type(exc).__name__)
import torch
print("cuda", torch.cuda.is_available(), torch.cuda.get_device_name(0) if torch.cuda.is_available() else "")
PYEOF
  command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=name,memory.total,driver_version,clocks.max.sm --format=csv
} > "$DEST/env.txt" 2>&1
cat "$DEST/env.txt"

step() {  # step NAME SECONDS LOG -- command...
  local name=$1 limit=$2 log=$3; shift 4
  local t=$(date +%s)
  echo; echo "== $name (limit ${limit}s) =="
  timeout --kill-after=10 "$limit" "$@" > "$log" 2>&1
  local rc=$?
  tail -n 25 "$log"
  echo "== $name: exit $rc, $(( $(date +%s) - t )) s =="
  echo "$name $rc $(( $(date +%s) - t ))" >> "$DEST/steps.txt"
  [ $rc -eq 0 ] || status=1
}
: > "$DEST/steps.txt"

# 1. GPU tests (on a machine without CUDA they are all skipped: the dry run checks exactly that)
# (only the files that hold gpu tests: collecting the others would need packages this machine may lack)
GPU_TESTS=$(grep -l "mark.gpu" tests/test_*.py)
step "pytest -m gpu" "$PYTEST_S" "$DEST/pytest.log" -- \
  "$PY" -m pytest -m gpu -q -p no:cacheprovider -rs --junitxml="$DEST/pytest.xml" $GPU_TESTS

# 1b. the same GPU tests with the kernel's per-step form as the default (ITLR_PUSH_BATCH=0; not with QUICK=1)
if [ "${QUICK:-0}" != 1 ]; then
step "pytest -m gpu, per-step form" "$PYTEST_S" "$DEST/pytest-per-step.log" -- \
  env ITLR_PUSH_BATCH=0 "$PY" -m pytest -m gpu -q -p no:cacheprovider -rs $GPU_TESTS
fi

# 2. the kernel benchmark
if [ $DRY = 1 ]; then
  step "gpu_kernel.py --smoke" "$BENCH_S" "$DEST/gpu_kernel.log" -- \
    "$PY" benchmarks/gpu_kernel.py --smoke --n 200 --k 1 7 --queries 8 --rule-check --out "$DEST/gpu_kernel"
else
  step "gpu_kernel.py" "$BENCH_S" "$DEST/gpu_kernel.log" -- \
    "$PY" benchmarks/gpu_kernel.py --repeat 3 --rule-check --out "$DEST/gpu_kernel"
fi

# 2b. a profile of one launch of each form (N = 1M, k = 10), where Nsight Compute is installed and a GPU is here
if [ $DRY = 0 ] && [ "${QUICK:-0}" != 1 ] && command -v ncu >/dev/null; then
  for form in push-batched per-step; do
    flag=""; [ $form = per-step ] && flag="--per-step"
    step "ncu $form" "${NCU_S:-120}" "$DEST/ncu-$form.csv" -- \
      ncu --clock-control none -k regex:fused_logical_topk_kernel --launch-skip 1 --launch-count 1 \
        --section SpeedOfLight --section ComputeWorkloadAnalysis --section MemoryWorkloadAnalysis \
        --section WarpStateStats --section Occupancy --section LaunchStats --section SchedulerStats \
        --csv --page details "$PY" benchmarks/gpu_kernel.py --n 1000000 --k 10 --profile-launch $flag
  done
fi

# 3. the short table, last
"$PY" - "$DEST" "$(( $(date +%s) - T0 ))" <<'PYEOF' | tee "$DEST/summary.md"
import json, re, sys
from pathlib import Path
dest, seconds = Path(sys.argv[1]), sys.argv[2]
print(f"# GPU check ({seconds} s) -> {dest}\n")
print("| step | exit | seconds |\n|---|---|---|")
for line in (dest / "steps.txt").read_text().splitlines():
    name, rc, sec = line.rsplit(" ", 2)
    print(f"| {name} | {rc} | {sec} |")
for name, title in (("pytest.log", "pytest -m gpu"), ("pytest-per-step.log", "pytest -m gpu, per-step form")):
    log = (dest / name).read_text() if (dest / name).exists() else ""
    tally = re.findall(r"(\d+) (passed|failed|skipped|error|errors|deselected)", log)
    print(f"\n{title}: " + (", ".join(f"{n} {w}" for n, w in tally) or "no result"))
bench = dest / "gpu_kernel.json"
if bench.exists():
    data = json.loads(bench.read_text())
    print(f"\nGPU: {data['info']['gpu']}\n")
    print("| N | k | fused ms | x matmul floor | x vs unfused | auto runs | peak/docs (search; process) "
          "| per-step form ms | its x floor |\n|---|---|---|---|---|---|---|---|---|")
    for r in data["results"]:
        vs = f"{r['speedup_vs_unfused']:.2f}" if "speedup_vs_unfused" in r else "-"
        peak = (f"{r['search_peak_over_docs']:.3f}; {r['peak_over_docs']:.3f}"
                if r.get("search_peak_over_docs") is not None else "-")
        pb = (f"{r['variant_s'] * 1e3:.2f} | {r['variant_vs_matmul_floor']:.2f}" if "variant_s" in r else "- | -")
        print(f"| {r['n']:,} | {r['k']} | {r['fused_s'] * 1e3:.2f} | {r['vs_matmul_floor']:.2f} | {vs} "
              f"| {r.get('auto', '-')} | {peak} | {pb} |")
    plans = [r for r in data["results"] if "old_plan_s" in r]
    if plans:
        print("\n| launch plan at k = 10: N | splits now | fused ms | splits until 12-04 | ms |\n|---|---|---|---|---|")
        for r in plans:
            print(f"| {r['n']:,} | {r['plan_nsplit']} | {r['fused_s'] * 1e3:.2f} | {r['old_plan_nsplit']} "
                  f"| {r['old_plan_s'] * 1e3:.2f} |")
    tiles = data["info"].get("autotune_by_n", [])
    if tiles:
        print("\n| tiles at k = 10: N | BLOCK_N x BLOCK_Q | ms |\n|---|---|---|")
        for t in tiles:
            for r in t["rows"]:
                ms = f"{r['seconds'] * 1e3:.2f}" if "seconds" in r else r.get("error", "-")[:40]
                c = r["config"]
                form = " d" + str(c["block_d"]) if c.get("block_d", 64) != 64 else ""
                form += ", push-batched" if c.get("push_batch") else ""
                print(f"| {t['n']:,} | {c['block_n']} x {c['block_q']}{form} | {ms} |")
    if data.get("targets"):
        print("\n| target | measured | met |\n|---|---|---|")
        for t in data["targets"]:
            print(f"| {t['target']} | {t['measured']} | {'yes' if t['met'] else 'NO'} |")
    if data.get("rule_check"):
        print("\n| auto rule: queries | depth | k | fused ms | torch ms | faster | rule says | per-step form ms |"
              "\n|---|---|---|---|---|---|---|---|")
        for r in data["rule_check"]:
            pb = f"{r['variant_s'] * 1e3:.2f}" if r.get("variant_s") is not None else "-"
            print(f"| {r['queries']} | {r['depth']} | {r['k']} | {r['fused_s'] * 1e3:.2f} | {r['torch_s'] * 1e3:.2f} "
                  f"| {r['faster']} | {r['rule']} | {pb} |")
    if data.get("budget_check"):
        print("\n| memory budget | MiB | cap / L | splits | starved | fused ms |\n|---|---|---|---|---|---|")
        for r in data["budget_check"]:
            print(f"| {r['budget']} (k = {r['k']}) | {r['mem_budget'] / 2**20:.0f} | {r['cap']} / {r['L']} "
                  f"| {r['nsplit']} | {r['starved']} | {r['fused_s'] * 1e3:.2f} |")
    for note in data.get("notes", []):
        print(f"\nnote: {note}")
else:
    print("\nno benchmark results (see gpu_kernel.log)")
PYEOF
exit $status
