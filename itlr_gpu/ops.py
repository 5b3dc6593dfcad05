"""Fuzzy-logic operator families (the paper's Table 2).

A query's score for a document is its AST evaluated over the per-term cosine
similarities with one of these families:

=========  ===============  =====================================================
operator   family           definition
=========  ===============  =====================================================
AND        ``product``      x * y                      (default, the paper's)
AND        ``sum``          x + y
AND        ``min``          min(x, y)
OR         ``sum``          x + y                      (default)
OR         ``max``          max(x, y)
NOT        ``one_minus``    1 - x                      (default)
NOT        ``reciprocal``   1 / max(x, RECIPROCAL_FLOOR)
=========  ===============  =====================================================

``reciprocal`` is made total and finite by flooring its argument at
:data:`RECIPROCAL_FLOOR`: cosine similarities can be 0 or negative, and a
document unrelated (or opposed) to the negated term should get the *largest*
NOT score, not an infinite or negative one.  So NOT(x) = 1/x for x >= 1e-3 and
1000 below; it is monotone non-increasing everywhere.

All arithmetic is float32; every backend applies exactly these formulas.
"""

from __future__ import annotations

from dataclasses import dataclass

from .errors import InputError

AND_FAMILIES = ("product", "sum", "min")
OR_FAMILIES = ("sum", "max")
NOT_FAMILIES = ("one_minus", "reciprocal")
RECIPROCAL_FLOOR = 1e-3


@dataclass(frozen=True)
class Ops:
    """One choice of AND, OR and NOT; ``str(ops)`` is the ``--ops`` spelling."""

    and_: str = "product"
    or_: str = "sum"
    not_: str = "one_minus"

    def __post_init__(self) -> None:
        for value, allowed, name in ((self.and_, AND_FAMILIES, "AND"), (self.or_, OR_FAMILIES, "OR"),
                                     (self.not_, NOT_FAMILIES, "NOT")):
            if value not in allowed:
                raise InputError(f"unknown {name} family {value!r}", "ops", " or ".join(allowed))

    @classmethod
    def parse(cls, spec: "str | Ops | None") -> "Ops":
        """``"product,sum,one_minus"`` (AND, OR, NOT families) -> Ops; Ops and None pass through."""
        if spec is None:
            return cls()
        if isinstance(spec, Ops):
            return spec
        if isinstance(spec, (tuple, list)):   # ("min", "max", "reciprocal")
            spec = ",".join(map(str, spec))
        parts = [p.strip().lower() for p in str(spec).split(",")]
        if len(parts) != 3 or not all(parts):
            raise InputError(f"bad operator spec {spec!r}", "ops",
                             "three comma-separated families AND,OR,NOT such as product,sum,one_minus")
        return cls(*parts)

    def __str__(self) -> str:
        return f"{self.and_},{self.or_},{self.not_}"

    # Element-wise definitions on torch tensors (also valid for numpy arrays).
    def apply_and(self, x, y):
        if self.and_ == "product":
            return x * y
        if self.and_ == "sum":
            return x + y
        return _minimum(x, y)

    def apply_or(self, x, y):
        if self.or_ == "sum":
            return x + y
        return _maximum(x, y)

    def apply_not(self, x):
        if self.not_ == "one_minus":
            return 1.0 - x
        return 1.0 / _clamp_min(x, RECIPROCAL_FLOOR)


DEFAULT_OPS = Ops()


def _minimum(x, y):
    import numpy as np
    return np.minimum(x, y) if isinstance(x, np.ndarray) else x.minimum(y)


def _maximum(x, y):
    import numpy as np
    return np.maximum(x, y) if isinstance(x, np.ndarray) else x.maximum(y)


def _clamp_min(x, lo):
    import numpy as np
    return np.maximum(x, np.float32(lo)) if isinstance(x, np.ndarray) else x.clamp_min(lo)
