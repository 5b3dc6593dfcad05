"""Canonical printing: every AND/OR chain in parentheses, every term quoted.

``parse(canonical(node)) == node`` for every flat AST (the parser flattens, so
this also holds for anything the parser produced).
"""

from __future__ import annotations

from ..errors import InputError
from .ast import And, Node, Not, Or, Term
from .parser import MAX_QUERY_CHARS, check_ast_depth, check_term, parse


def quote(text: str) -> str:
    """A term as a double-quoted string with ``\\"`` and ``\\\\`` escapes."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def canonical(node: Node | str) -> str:
    """The canonical form of a query (iterative: no recursion limit to hit); an expression string is parsed
    first.  A node that no expression could spell (an empty term, an operator without operands, not a node,
    nesting deeper than the parser's limit, a form longer than the parser reads) is an InputError: its form would
    not parse back (a term as :func:`~itlr_gpu.query.parser.check_term` says)."""
    if isinstance(node, str):
        node = parse(node)
    else:
        check_ast_depth(node)
    written = printed(node)
    if len(written) > MAX_QUERY_CHARS:
        raise InputError(f"the query's canonical form is {len(written):,} characters long", "query",
                         f"at most {MAX_QUERY_CHARS:,} characters (as parse() reads back; every term quoted, '\"' and "
                         "'\\' escaped)")
    return written


def printed(node: Node) -> str:
    """The canonical form of an AST whose depth was checked, whatever its length (the parser measures it)."""
    out: list[str] = []
    # the printed punctuation goes on the stack as 1-tuples: a str child of a node is a malformed AST, not text
    stack: list[Node | tuple[str]] = [node]
    while stack:
        item = stack.pop()
        if isinstance(item, tuple):
            out.append(item[0])
        elif isinstance(item, Term):
            check_term(item.text)
            out.append(quote(item.text))
        elif isinstance(item, Not):
            # The grammar has no NOT NOT: a negated negation needs its parentheses.
            if isinstance(item.child, Not):
                out.append("NOT (")
                stack.extend(((")",), item.child))
            else:
                out.append("NOT ")
                stack.append(item.child)
        elif isinstance(item, (And, Or)) and item.children:
            op = (" AND ",) if isinstance(item, And) else (" OR ",)
            parts: list[Node | tuple[str]] = [("(",)]
            for i, child in enumerate(item.children):
                if i:
                    parts.append(op)
                parts.append(child)
            parts.append((")",))
            stack.extend(reversed(parts))
        elif isinstance(item, (And, Or)):
            raise InputError(f"empty {type(item).__name__} in query AST", "query", "at least one operand")
        else:
            raise InputError(f"not a query node: {type(item).__name__}", "query", "Term, Not, And or Or")
    return "".join(out)


def natural_text(node: Node) -> str:
    """A plain-English rendering of a query (the whole-query text when none is given):
    ``"a" AND NOT ("b" OR "c")`` -> ``a and not (b or c)``.  Iterative, like :func:`canonical`: an AST built
    by hand may be deeper than Python's recursion limit."""
    out: list[str] = []
    stack: list[tuple[Node | str, bool]] = [(node, True)]
    while stack:
        item, top = stack.pop()
        if isinstance(item, str):
            out.append(item)
        elif isinstance(item, Term):
            out.append(item.text)
        elif isinstance(item, Not):
            out.append("not ")
            stack.append((item.child, False))
        else:
            joiner = " and " if isinstance(item, And) else " or "
            parts: list[tuple[Node | str, bool]] = [] if top else [("(", False)]
            for i, child in enumerate(item.children):
                if i:
                    parts.append((joiner, False))
                parts.append((child, False))
            if not top:
                parts.append((")", False))
            stack.extend(reversed(parts))
    return "".join(out)
