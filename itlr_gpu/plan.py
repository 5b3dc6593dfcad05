"""Query plans: a batch's queries grouped by opcode sequence ("shape"), shared by every torch scoring path.

Queries with the same opcode sequence are evaluated together: the stack holds (G x C)
tensors for a group of G queries, so a batch of a few templates costs a few dozen tensor
ops per chunk, not one per query.  Planning is host-side work once per batch; the scoring
constants (:mod:`itlr_gpu.scoring`) and the chunk loops (:mod:`itlr_gpu.backends.reference`)
both use it.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from .compiler import PUSH, Program

__all__ = ["ShapeGroup", "Plan", "plan_groups"]


@dataclass
class ShapeGroup:
    opcodes: tuple[int, ...]      # shared opcode sequence
    start: int                    # the group's queries are rows start:start+G of the permuted score matrix
    push_terms: torch.Tensor      # (P, G) term index of each PUSH, in order


@dataclass
class Plan:
    groups: list[ShapeGroup]
    order: torch.Tensor           # permuted row i is query order[i]
    identity: bool                # every query is PUSH of term q: the scores are the similarities

    def unpermute(self, rows: torch.Tensor) -> torch.Tensor:
        """Rows in plan order -> rows in query order (row i of the input belongs to query order[i])."""
        inverse = torch.empty_like(self.order)
        inverse[self.order] = torch.arange(len(self.order), device=self.order.device)
        return rows[inverse]


def plan_groups(program: Program, device: torch.device) -> Plan:
    """Group queries by opcode sequence (host side, once per batch).

    Groups are laid out contiguously in a permuted score matrix so each group's
    result is written with one copy into its slice.
    """
    members: dict[tuple[int, ...], tuple[list[int], list[np.ndarray]]] = {}
    for q in range(program.num_queries):
        ops, args = program.query_code(q)
        entry = members.setdefault(tuple(int(o) for o in ops), ([], []))
        entry[0].append(q)
        entry[1].append(args[ops == PUSH])
    groups, order = [], []
    for key, (qs, args) in members.items():
        push = torch.from_numpy(np.stack(args, axis=1).astype(np.int64)).to(device)
        groups.append(ShapeGroup(key, len(order), push))
        order.extend(qs)
    identity = (len(groups) == 1 and groups[0].opcodes == (PUSH,) and len(program.terms) == program.num_queries
                and bool(np.array_equal(groups[0].push_terms[0].cpu().numpy(), np.arange(program.num_queries))))
    return Plan(groups, torch.tensor(order, dtype=torch.int64, device=device), identity)
