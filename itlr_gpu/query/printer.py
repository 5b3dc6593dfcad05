"""Canonical printing: every AND/OR chain in parentheses, every term quoted.

``parse(canonical(node)) == node`` for every flat AST (the parser flattens, so
this also holds for anything the parser produced).
"""

from __future__ import annotations

from .ast import And, Node, Not, Term


def quote(text: str) -> str:
    """A term as a double-quoted string with ``\\"`` and ``\\\\`` escapes."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def canonical(node: Node) -> str:
    """The canonical form of a query (iterative: no recursion limit to hit)."""
    out: list[str] = []
    stack: list[Node | str] = [node]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            out.append(item)
        elif isinstance(item, Term):
            out.append(quote(item.text))
        elif isinstance(item, Not):
            # The grammar has no NOT NOT: a negated negation needs its parentheses.
            if isinstance(item.child, Not):
                out.append("NOT (")
                stack.extend((")", item.child))
            else:
                out.append("NOT ")
                stack.append(item.child)
        else:
            op = " AND " if isinstance(item, And) else " OR "
            parts: list[Node | str] = ["("]
            for i, child in enumerate(item.children):
                if i:
                    parts.append(op)
                parts.append(child)
            parts.append(")")
            stack.extend(reversed(parts))
    return "".join(out)


def natural_text(node: Node) -> str:
    """A plain-English rendering of a query (the whole-query text when none is given):
    ``"a" AND NOT ("b" OR "c")`` -> ``a and not (b or c)``."""

    def ev(n: Node, top: bool = False) -> str:
        if isinstance(n, Term):
            return n.text
        if isinstance(n, Not):
            return "not " + ev(n.child)
        joiner = " and " if isinstance(n, And) else " or "
        s = joiner.join(ev(c) for c in n.children)
        return s if top else f"({s})"

    return ev(node, top=True)
