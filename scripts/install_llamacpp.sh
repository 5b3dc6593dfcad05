# Build llama-cpp-python (the engine of `--translator llamacpp`) from source for this machine's CPU, into the
# project's virtual environment (scripts/env.sh).  Several minutes on two cores.
#
#   bash scripts/install_llamacpp.sh            # then: itlr models install qwen2.5-coder-1.5b --pip
#
# Built for the build machine's instruction sets (GGML_NATIVE), AMX included where the CPU has it.  With GCC, the
# AMX kernels also need -fno-dse: GCC's _tile_loadconfig tells the compiler it reads 8 bytes of the 64-byte tile
# configuration, so dead-store elimination drops the stores that fill the rest, and the first batched request
# faults at `ldtilecfg` (segmentation fault) or at the first tile instruction (illegal instruction).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# shellcheck disable=SC1091
. "$ROOT/scripts/env.sh"

args="-DGGML_NATIVE=ON"
cxx="${CXX:-c++}"
# GCC, not clang (whose --version may also say c++): the preprocessor's macros tell them apart
macros="$(echo | "$cxx" -dM -E -x c++ - 2>/dev/null || true)"
if grep -qw amx_int8 /proc/cpuinfo 2>/dev/null && [[ "$macros" == *__GNUC__* && "$macros" != *__clang__* ]]; then
  args="$args -DCMAKE_CXX_FLAGS=-fno-dse"
fi
echo "building llama-cpp-python with CMAKE_ARGS=\"$args ${CMAKE_ARGS:-}\"" >&2
CMAKE_ARGS="$args ${CMAKE_ARGS:-}" CMAKE_BUILD_PARALLEL_LEVEL="${CMAKE_BUILD_PARALLEL_LEVEL:-$(nproc)}" \
  python -m pip install --quiet --force-reinstall --no-deps --no-cache-dir "llama-cpp-python==0.3.36"
python -m pip install --quiet "jinja2>=3" "diskcache>=5"
python - <<'EOF'
import ctypes, pathlib, llama_cpp
lib = pathlib.Path(llama_cpp.__file__).parent / "lib" / "libggml-cpu.so"
amx = bool(ctypes.CDLL(str(lib)).ggml_cpu_has_amx_int8()) if lib.exists() else False
print(f"llama-cpp-python {llama_cpp.__version__} installed (AMX int8 kernels: {'yes' if amx else 'no'})")
EOF
