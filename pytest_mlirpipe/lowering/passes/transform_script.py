"""`mlirpipe-transform`: run a transform-dialect script file on the module, its named sizes set."""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path

from .registry import PassBody, register

# The attribute a script puts on a transform op whose `static_*sizes` (or `tile_sizes`, as
# tile_reduction_using_for calls them) come from named sizes:
# `{mlirpipe.sizes = [1, "register"]}` is 1 followed by the values of the size `register`.
SIZES_ATTR = "mlirpipe.sizes"
_SIZE_SPEC = re.compile(r"^\s*([a-z0-9]+(?:-[a-z0-9]+)*)\s*=\s*(\d+(?:\s*,\s*\d+)*)\s*$")


class SizesSyntaxError(ValueError):
    """A `name=v,v name2=v` text that is not one."""


def parse_sizes(text: str) -> dict[str, tuple[int, ...]]:
    """`"block=64,256 register=8,32,1"` -> {'block': (64, 256), 'register': (8, 32, 1)}."""
    sizes: dict[str, tuple[int, ...]] = {}
    for item in text.split():
        m = _SIZE_SPEC.match(item)
        if m is None:
            raise SizesSyntaxError(
                f"{item!r} is not NAME=N[,N...] (a kebab-case name, positive integers)"
            )
        values = tuple(int(v) for v in m.group(2).split(","))
        if 0 in values:
            raise SizesSyntaxError(f"{item!r}: sizes must be positive")
        sizes[m.group(1)] = values
    return sizes


def format_sizes(sizes: Mapping[str, tuple[int, ...]]) -> str:
    """The inverse of parse_sizes."""
    return " ".join(f"{k}={','.join(str(v) for v in vs)}" for k, vs in sizes.items())


@register(
    "mlirpipe-transform",
    "Run the transform-dialect script `script` (its `entry-point` named sequence, default "
    "__transform_main) on the module; `sizes` (NAME=N,N ...) set the static sizes of the ops "
    f"the script marks with {SIZES_ATTR}",
    options=("script", "entry-point", "sizes"),
)
def transform_script(options: dict[str, str]) -> PassBody:
    script = options.get("script", "")
    entry = options.get("entry-point", "__transform_main")
    sizes = parse_sizes(options.get("sizes", ""))

    def run(op, pass_) -> None:
        from torch_mlir.dialects.transform import interpreter

        from ...mlir_env import ir

        try:
            text = Path(script).read_text(encoding="utf-8")
        except OSError as exc:
            op.location.emit_error(
                f"mlirpipe-transform: cannot read the script '{script}': {exc.strerror}"
            )
            pass_.signal_pass_failure()
            return
        try:
            library = ir.Operation.parse(text, source_name=script)
        except ir.MLIRError as exc:
            op.location.emit_error(f"mlirpipe-transform: the script does not parse: {exc}")
            pass_.signal_pass_failure()
            return
        sequences = _named_sequences(library)
        if entry not in sequences:
            library.location.emit_error(
                f"mlirpipe-transform: the script has no named sequence @{entry} "
                f"(it has: {', '.join('@' + n for n in sequences) or 'none'})"
            )
            pass_.signal_pass_failure()
            return
        problems = set_sizes(_reachable(sequences, entry), sizes, library.location, ir)
        for where, message in problems:
            where.emit_error(f"mlirpipe-transform: {message}")
        if problems:
            pass_.signal_pass_failure()
            return
        interpreter.apply_named_sequence(op, sequences[entry], library)

    return run


def _named_sequences(module) -> dict:
    """The script's transform.named_sequence ops by name."""
    out = {}
    for inner in module.regions[0].blocks[0].operations:
        if inner.operation.name == "transform.named_sequence":
            out[str(inner.operation.attributes["sym_name"]).strip('"')] = inner.operation
    return out


# The ops that run other named sequences, and the attributes that name them.
_CALLERS = {
    "transform.include": ("target",),
    "transform.foreach_match": ("matchers", "actions"),
}


def _reachable(sequences: dict, entry: str) -> list:
    """The named sequences `entry` runs: itself and those it includes or matches and applies
    with transform.foreach_match, transitively."""
    seen = [entry]
    for name in seen:

        def visit(op, seen=seen):
            for attr in _CALLERS.get(op.name, ()):
                value = op.attributes[attr]
                refs = list(value) if hasattr(value, "__len__") else [value]
                for ref in refs:
                    target = str(ref).lstrip("@")
                    if target in sequences and target not in seen:
                        seen.append(target)
            return 0  # WalkResult.ADVANCE

        sequences[name].walk(visit)
    return [sequences[n] for n in seen]


def set_sizes(sequences: list, sizes: Mapping[str, tuple[int, ...]], where, ir) -> list[tuple]:
    """Give every op marked with SIZES_ATTR in `sequences` its sizes; (location, message) for
    each problem (a size they use that `sizes` lacks, one `sizes` gives that none uses)."""
    problems: list[tuple] = []
    used: set[str] = set()

    def visit(op):
        if SIZES_ATTR in op.attributes:
            problems.extend(_set_op_sizes(op, sizes, used, ir))
        return ir.WalkResult.ADVANCE

    for seq in sequences:
        seq.walk(visit)
    for name in sorted(set(sizes) - used):
        problems.append((where, f"size '{name}' is given but the script never uses it"))
    return problems


def _set_op_sizes(op, sizes: Mapping[str, tuple[int, ...]], used: set[str], ir) -> list[tuple]:
    values: list[int] = []
    for entry in op.attributes[SIZES_ATTR]:
        if isinstance(entry, ir.IntegerAttr):
            values.append(entry.value)
            continue
        if not isinstance(entry, ir.StringAttr):
            return [(op.location, f"{SIZES_ATTR} holds {entry}: give integers and size names")]
        name = entry.value
        if name not in sizes:
            known = ", ".join(sorted(sizes)) or "(none)"
            return [(op.location, f"size '{name}' has no value (sizes given: {known})")]
        used.add(name)
        values.extend(sizes[name])
    targets = [a for a in op.attributes if re.fullmatch(r"static_\w*sizes|tile_sizes", a)]
    if len(targets) != 1:
        return [
            (op.location, f"{op.name} has no single static_*sizes or tile_sizes attribute to set")
        ]
    old = op.attributes[targets[0]]
    if len(old) != len(values):
        return [
            (
                op.location,
                f"{op.name} takes {len(old)} sizes, {SIZES_ATTR} gives {len(values)} {values}",
            )
        ]
    if isinstance(old, ir.ArrayAttr):  # tile_sizes: an array of i64 attributes
        i64 = ir.IntegerType.get_signless(64)
        op.attributes[targets[0]] = ir.ArrayAttr.get([ir.IntegerAttr.get(i64, v) for v in values])
    else:
        op.attributes[targets[0]] = ir.DenseI64ArrayAttr.get(values)
    return []
