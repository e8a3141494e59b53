"""Replace each gemm op of a module by a call of its helper, inserting one helper per shape."""

from __future__ import annotations

from collections.abc import Callable

from .emit import helper_text
from .folding import fold_output, fold_transposes
from .matching import GEMM, MATMUL_OPS, Plan, Refused, looks_like_matmul, match
from .ssa import defining_op, ir

# Told about each op left as it was, and why (the pass's `debug` option).
OnRefusal = Callable[[object, str], None]


class Rewriter:
    """Rewrites the gemms of one module; `prefix` goes before the CBLAS function names."""

    def __init__(self, module_op, prefix: str, on_refusal: OnRefusal | None = None):
        self.module = module_op
        self.prefix = prefix
        self.on_refusal = on_refusal
        self.helpers: dict[str, str] = {}  # helper text (with a placeholder name) -> name
        self.symbols: set[str] = set()

    def run(self) -> None:
        candidates = self._candidates()
        body = self.module.regions[0].blocks[0]
        self.symbols = {
            ir().StringAttr(o.attributes["sym_name"]).value
            for o in body.operations
            if "sym_name" in o.attributes
        }
        for op in candidates:
            try:
                plan = match(op)
                fold_output(plan)
                fold_transposes(plan)
                self._rewrite(plan)
            except Refused as why:
                if self.on_refusal and (op.name != "linalg.generic" or looks_like_matmul(op)):
                    self.on_refusal(op, f"'{op.name}' left as it was: {why}")

    def _candidates(self) -> list:
        bindings = ir()
        found = []

        def visit(op):
            if op.name in MATMUL_OPS:
                found.append(op.operation)
                return bindings.WalkResult.SKIP
            return bindings.WalkResult.ADVANCE

        self.module.walk(visit)
        return found

    def _rewrite(self, plan: Plan) -> None:
        bindings = ir()
        symbol = f"{self.prefix}{GEMM[plan.elem][0]}"
        text = helper_text(plan, "@@NAME@@", symbol)
        name = self.helpers.get(text)
        if name is None:
            name = self._fresh(f"mlirpipe_blas_{plan.elem}_gemm")
            self.helpers[text] = name
            self._insert(text.replace("@@NAME@@", name), symbol)
        op = plan.op
        with op.location, bindings.InsertionPoint(op):
            bindings.Operation.create(
                "func.call",
                results=[],
                operands=[plan.a.value, plan.b.value, plan.c.value],
                attributes={"callee": bindings.FlatSymbolRefAttr.get(name)},
            )
        op.erase()
        _erase_folded(plan)

    def _fresh(self, base: str) -> str:
        name, i = base, 0
        while name in self.symbols:
            i += 1
            name = f"{base}_{i}"
        self.symbols.add(name)
        return name

    def _insert(self, text: str, symbol: str) -> None:
        bindings = ir()
        with self.module.context, bindings.Location.unknown():
            parsed = bindings.Module.parse(f"module {{\n{text}\n}}")
        body = self.module.regions[0].blocks[0]
        for op in list(parsed.body.operations):
            sym = bindings.StringAttr(op.attributes["sym_name"]).value
            if sym == symbol and symbol in self.symbols:
                continue
            self.symbols.add(sym)
            op.detach_from_parent()
            body.append(op)


def _erase_folded(plan: Plan) -> None:
    """Erase the ops folded into the call; make the forwarded writer write the output."""
    for dead in plan.dead:
        scalar = dead.operands[0] if dead.name == "linalg.fill" else None
        dead.erase()
        if scalar is not None and not list(scalar.uses):
            defining_op(scalar).erase()  # the zero constant, when nothing else uses it
    if plan.forward is not None:
        writer, copy = plan.forward
        temp = copy.operands[0]
        defining_op(plan.c.value).move_before(writer)
        writer.operands[len(writer.operands) - 1] = plan.c.value
        copy.erase()
        defining_op(temp).erase()
