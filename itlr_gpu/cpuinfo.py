"""What CPU a benchmark ran on: the model name alone does not say ("AMD EPYC" covers AVX2-only
Zen 2/3 parts and AVX-512 + bf16 Zen 4/5 ones, which differ 2x in BLAS speed), so the name comes
with the CPU family/model and the vector extensions that change our fast paths."""

from __future__ import annotations

import platform

__all__ = ["SIMD_FLAGS", "cpu_name", "cpu_vendor", "simd_flags"]

SIMD_FLAGS = ("avx2", "avx512f", "avx512_vnni", "avx512_bf16", "amx_bf16")
"""The extensions reported: AVX2 / AVX-512 (BLAS kernels, llama.cpp), VNNI (int8), bf16 (encoder precision)."""


def _cpuinfo() -> dict[str, str]:
    info: dict[str, str] = {}
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                if not line.strip():
                    break  # the first processor is enough
                key, _, value = line.partition(":")
                info.setdefault(key.strip(), value.strip())
    except OSError:
        pass
    return info


def cpu_vendor() -> str:
    """``GenuineIntel``, ``AuthenticAMD``, ... (empty where /proc/cpuinfo is missing)."""
    return _cpuinfo().get("vendor_id", "")


def simd_flags() -> list[str]:
    """Which of :data:`SIMD_FLAGS` this CPU reports (empty where /proc/cpuinfo is missing)."""
    flags = set(_cpuinfo().get("flags", "").split())
    return [f for f in SIMD_FLAGS if f in flags]


def cpu_name() -> str:
    """e.g. ``AMD EPYC (family 26 model 2; avx2, avx512f, avx512_vnni, avx512_bf16)``."""
    info = _cpuinfo()
    name = info.get("model name") or platform.processor() or platform.machine()
    ident = f"family {info['cpu family']} model {info['model']}" if "cpu family" in info and "model" in info else ""
    simd = ", ".join(simd_flags())
    detail = "; ".join(x for x in (ident, simd) if x)
    return f"{name} ({detail})" if detail else name
