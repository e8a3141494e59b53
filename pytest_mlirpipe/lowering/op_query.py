"""Find ops in a parsed module by name glob and symbol (`linalg.*`, `func.call @cblas_*`)."""

from __future__ import annotations

import fnmatch
import functools
import re
from dataclasses import dataclass
from pathlib import Path

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


def is_glob(text: str) -> bool:
    """Whether `text` holds glob characters (`*`, `?`, `[`)."""
    return any(c in text for c in "*?[")


def is_registered_dialect(context, name: str) -> bool:
    """Whether the bindings' `context` knows a dialect of that name (loading it if need be)."""
    try:
        context.get_dialect_descriptor(name)
    except ValueError:
        return False
    return True


@functools.lru_cache(maxsize=1)
def generated_op_names() -> tuple[str, ...]:
    """The op names of the bindings' generated op classes (`OPERATION_NAME = "linalg.matmul"`
    in `dialects/_*_ops_gen.py`), read as text: candidates for a close match, not a registry
    (the context is that: some registered dialects have no Python classes)."""
    from ..mlir_env import ir

    folder = Path(ir.__file__).parent / "dialects"
    names: set[str] = set()
    for path in folder.glob("_*_ops_gen.py"):
        names.update(_OPERATION_NAME.findall(path.read_text(encoding="utf-8")))
    return tuple(sorted(names))


_OPERATION_NAME = re.compile(r'^\s*OPERATION_NAME = "([\w.$]+)"', re.MULTILINE)


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
