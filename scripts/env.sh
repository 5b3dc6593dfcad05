# Create or reuse the project's virtual environment and install everything into it.
# Sourced by scripts/demo.sh and scripts/test.sh; safe to re-run (skips pip when nothing changed).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="${ITLR_VENV:-$ROOT/.venv}"
PYTHON="${PYTHON:-python3}"
EXTRAS="${ITLR_EXTRAS:-test}"
# On CPUs with AMX, OpenVINO's bf16 encoder is the fastest measured (itlr index of SciFact 3.2x the torch fp32
# baseline, benchmarks/results/encode-xeon.md) and `--encoder-backend auto` picks it there when installed.
if [ -z "${ITLR_EXTRAS:-}" ] && grep -qw amx_bf16 /proc/cpuinfo 2>/dev/null; then
  EXTRAS="test,openvino"
fi

if [ ! -x "$VENV/bin/python" ]; then
  echo "creating virtual environment $VENV" >&2
  "$PYTHON" -m venv "$VENV"
fi
# shellcheck disable=SC1091
. "$VENV/bin/activate"

stamp="$VENV/.itlr-installed"
want="$(cat "$ROOT/pyproject.toml" "$ROOT/scripts/env.sh" | sha256sum | cut -d' ' -f1)-$EXTRAS"
if [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
  python -m pip install --quiet --upgrade pip
  if ! python -c "import torch" 2>/dev/null; then
    if command -v nvidia-smi >/dev/null 2>&1 && [ "${ITLR_TORCH:-}" != "cpu" ]; then
      python -m pip install --quiet torch          # CUDA build on GPU machines
    elif command -v nvidia-smi >/dev/null 2>&1; then
      # ITLR_TORCH=cpu on a GPU machine: PyPI would give the CUDA build, PyTorch's CPU index the CPU one
      python -m pip install --quiet --index-url "${ITLR_TORCH_INDEX:-https://download.pytorch.org/whl/cpu}" torch==2.13.0
    else
      # the CPU wheel where pip's index has it; PyPI's Linux wheel is the CUDA build, so elsewhere
      # ITLR_TORCH_INDEX=https://download.pytorch.org/whl/cpu takes the CPU one from PyTorch's index
      python -m pip install --quiet ${ITLR_TORCH_INDEX:+--index-url "$ITLR_TORCH_INDEX"} torch==2.13.0
    fi
  fi
  python -m pip install --quiet -e "$ROOT[$EXTRAS]"
  echo "$want" > "$stamp"
fi
