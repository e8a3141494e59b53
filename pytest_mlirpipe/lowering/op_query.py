"""Find ops in a parsed module by name glob and symbol (`linalg.*`, `func.call @cblas_*`)."""

from __future__ import annotations

import fnmatch
import re
from dataclasses import dataclass

# OPNAME-GLOB [@SYMBOL-GLOB]: `linalg.*`, `func.call @cblas_sgemm`, `*.call @*sgemm`
_PATTERN = re.compile(r"(?P<op>[A-Za-z_*?\[\]][\w.$*?\[\]!-]*)(?:\s+@(?P<sym>[\w.$*?\[\]!-]+))?")


@dataclass(frozen=True, slots=True)
class OpPattern:
    """Ops whose name matches `op` (a glob) and, if given, whose symbol (`callee` or
    `sym_name`) matches `symbol` (a glob)."""

    op: str
    symbol: str | None = None

    @classmethod
    def parse(cls, text: str) -> OpPattern | None:
        """`linalg.*`, `func.call @name`; None when `text` is not of that form."""
        m = _PATTERN.fullmatch(text.strip())
        return cls(m.group("op"), m.group("sym")) if m else None

    def __str__(self) -> str:
        return self.op + (f" @{self.symbol}" if self.symbol else "")

    def matches(self, op) -> bool:  # an MLIR binding operation
        if not fnmatch.fnmatchcase(op.name, self.op):
            return False
        if self.symbol is None:
            return True
        found = symbol_of(op)
        return found is not None and fnmatch.fnmatchcase(found, self.symbol)


def symbol_of(op) -> str | None:
    """The symbol an op calls (`callee`) or defines (`sym_name`), if any."""
    from ..mlir_env import ir

    attrs = op.attributes
    for key in ("callee", "sym_name"):
        if key not in attrs:
            continue
        attr = attrs[key]
        if isinstance(attr, ir.FlatSymbolRefAttr | ir.StringAttr):
            return attr.value
    return None


def dialect_of(op) -> str:
    return op.name.split(".", 1)[0]


def all_ops(root) -> list:
    """`root` (an operation) and every op nested in it, in pre-order."""
    from ..mlir_env import ir

    found: list = []

    def visit(inner):
        found.append(inner)
        return ir.WalkResult.ADVANCE

    root.walk(visit, ir.WalkOrder.PRE_ORDER)
    return found


def outermost(ops: list, matches) -> list:
    """The ops of `ops` that are not nested inside an op for which `matches` holds (the
    implicit linalg.yield of a forbidden linalg.matmul adds nothing but noise)."""
    out = []
    for op in ops:
        parent = op.parent
        while parent is not None and not matches(parent):
            parent = parent.parent
        if parent is None:
            out.append(op)
    return out


def known_location(op):
    """The op's location, or its nearest ancestor's when it has none (ops a parser made up)."""
    current = op
    while current is not None and str(current.location) == "loc(unknown)":
        current = current.parent
    return (current or op).location


def first_line(op, width: int = 120) -> str:
    """The op as printed, its first line only, cut to `width` characters."""
    text = op.get_asm(large_elements_limit=16, assume_verified=True).strip()
    line = text.splitlines()[0] if text else op.name
    return line if len(line) <= width else line[: width - 3] + "..."
