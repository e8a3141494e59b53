"""Structural assertions: the grammar, the verdicts and messages, the Python API, lit's verdicts."""

from __future__ import annotations

import io
import re
import sys
from pathlib import Path

import pytest

from pytest_mlirpipe.errors import UsageError
from pytest_mlirpipe.tools import ir_assert
from pytest_mlirpipe.tools.ir_assert import IRAssertionError, assert_ir, parse_assertion

HERE = Path(__file__).parent
MATMUL = """\
func.func @forward(%a: tensor<2x2xf32>, %b: tensor<2x2xf32>) -> tensor<2x2xf32> {
  %c0 = arith.constant 0.0 : f32
  %0 = tensor.empty() : tensor<2x2xf32>
  %1 = linalg.fill ins(%c0 : f32) outs(%0 : tensor<2x2xf32>) -> tensor<2x2xf32>
  %2 = linalg.matmul ins(%a, %b : tensor<2x2xf32>, tensor<2x2xf32>)
                     outs(%1 : tensor<2x2xf32>) -> tensor<2x2xf32>
  %3 = func.call @scipy_cblas_sgemm() : () -> i32
  return %2 : tensor<2x2xf32>
}
func.func private @scipy_cblas_sgemm() -> i32
"""


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("nodialect linalg", "unknown assertion 'nodialect linalg'\n  hint: did you mean"),
        ("count(linalg.* == 0", "malformed assertion 'count(linalg.* == 0': write count("),
        ("exactly two func.call", "'exactly' takes a count and an op pattern"),
        ("no-dialect linalg,9x", "'9x' is not a dialect name"),
        ("no-op linalg.matmul @", "'linalg.matmul @' is not an op pattern"),
        ("no-dialect linalg after", "'after' takes one stage name, at the end: RULE after"),
        ("no-op linalg.matmul after", "'after' takes one stage name, at the end: RULE after"),
        ("no-dialect linalg after a b", "'after' takes one stage name, at the end: RULE after"),
    ],
)
def test_malformed_assertions_say_what_is_wrong_and_the_grammar(text: str, message: str) -> None:
    with pytest.raises(UsageError) as err:
        parse_assertion(text)
    assert message in str(err.value)


def test_assertions_read_their_stage_and_braced_dialect_lists() -> None:
    a = parse_assertion("only-dialects {llvm, builtin} after convert-to-llvm")
    assert (a.kind, a.dialects, a.stage) == (
        "only-dialects",
        ("llvm", "builtin"),
        "convert-to-llvm",
    )
    c = parse_assertion("count(func.call @*sgemm) >= 2")
    assert (str(c.pattern), c.cmp, c.n, c.stage) == ("func.call @*sgemm", ">=", 2, None)


def test_python_api_chains_assertions_that_hold_and_counts_outermost_ops() -> None:
    checked = assert_ir(MATMUL, source_name="mm.mlir")
    checked.no_dialect("llvm", "scf").exactly(1, "linalg.matmul").holds("count(linalg.*) == 2")
    assert checked.count("linalg.*") == 2  # their implicit linalg.yield ops are not counted
    assert checked.count("arith.*") == 3  # the constant, and the matmul body's mulf and addf
    assert checked.count("func.call @*cblas_sgemm") == 1


def test_a_failing_assertion_lists_the_ops_at_their_input_locations() -> None:
    with pytest.raises(IRAssertionError) as err:
        assert_ir(MATMUL, source_name="mm.mlir").no_dialect("linalg")
    assert str(err.value).splitlines() == [
        "error: assertion 'no-dialect linalg' failed in mm.mlir: 2 ops of dialect linalg",
        "  mm.mlir:4:8: %1 = linalg.fill ins(%cst : f32) outs(%0 : tensor<2x2xf32>) -> "
        "tensor<2x2xf32>",
        "  mm.mlir:5:8: %2 = linalg.matmul ins(%arg0, %arg1 : tensor<2x2xf32>, "
        "tensor<2x2xf32>) outs(%1 : tensor<2x2xf32>) -> tensor<2x2xf32>",
    ]


def test_a_symbol_not_found_names_the_symbols_that_are_there() -> None:
    with pytest.raises(IRAssertionError) as err:
        assert_ir(MATMUL).exactly(1, "func.call @cblas_sgemm")
    assert str(err.value) == (
        "error: assertion 'exactly 1 func.call @cblas_sgemm' failed in <ir>: 0 ops match "
        "'func.call @cblas_sgemm', expected == 1\n"
        "  hint: func.call ops here name: @scipy_cblas_sgemm"
    )


def test_only_dialects_counts_the_module_and_names_the_stage_of_a_snapshot() -> None:
    from pytest_mlirpipe.lowering.catalog import catalog_for
    from pytest_mlirpipe.lowering.stages import run_stages

    run = run_stages(MATMUL, catalog_for(()).get("refbackend"), source_name="mm.mlir")
    assert_ir(run.snapshots[-1]).only_dialects("llvm", "builtin")
    llvm = assert_ir(run.module, source_name="mm.mlir").only_dialects("llvm", "builtin")
    with pytest.raises(
        IRAssertionError, match=r"1 op matches 'llvm.call @\*sgemm'.*\n  mm.mlir:7:8:"
    ):
        llvm.no_op("llvm.call @*sgemm")
    with pytest.raises(IRAssertionError, match=r"after stage 'bufferize': 2 ops match"):
        assert_ir(run.snapshots[1]).no_op("linalg.*")
    with pytest.raises(IRAssertionError, match=r"1 op of a dialect other than llvm\n  <ir>:1:1"):
        assert_ir(run.snapshots[-1]).only_dialects("llvm")  # the builtin.module
    with pytest.raises(UsageError, match="'after bufferize' needs a pipeline run"):
        assert_ir(MATMUL).holds("no-dialect linalg after bufferize")


def test_many_offending_ops_are_cut_to_the_first_ten() -> None:
    ops = "".join(f"  %x{i} = arith.constant {i} : i32\n" for i in range(13))
    with pytest.raises(IRAssertionError) as err:
        assert_ir(f"func.func @f() {{\n{ops}  return\n}}\n").no_dialect("arith")
    lines = str(err.value).splitlines()
    assert lines[0].endswith("13 ops of dialect arith")
    assert len(lines) == 12 and lines[-1] == "  ... and 3 more"


def test_mlirpipe_assert_reports_bad_input_and_staged_assertions() -> None:
    out, err = io.StringIO(), io.StringIO()
    status = ir_assert.run(["no-dialect scf"], io.StringIO("func.func @f( {"), out, err)
    assert status == 1 and re.match(r"<stdin>:1:\d+: error: ", err.getvalue())
    err = io.StringIO()
    status = ir_assert.run(["no-dialect x after bufferize"], io.StringIO(MATMUL), out, err)
    assert status == 2 and "mlirpipe-assert sees only its input, not stages" in err.getvalue()
    assert "hint: use `mlirpipe-opt FILE --pipeline P --assert" in err.getvalue()


def test_lit_gives_the_assertion_files_the_verdicts_pytest_gives(tmp_path: Path) -> None:
    sys.path.insert(0, str(HERE.parent / "plugin"))
    try:
        from litrun import lit_verdicts
    finally:
        sys.path.remove(str(HERE.parent / "plugin"))
    files = sorted(p.name for p in HERE.glob("assert-*.mlir"))
    codes, output = lit_verdicts(HERE.parent.parent, *[f"test/checks/{f}" for f in files])
    assert codes == dict.fromkeys(files, "PASS"), output


STAGED = "no-dialect scf after lower-to-cf"
AFTER = "no-dialect scf after bufferize"


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (
            ["--pipeline", "refbackend", "--assert", "no-dialect linalg after bufferise"],
            "--assert 'no-dialect linalg after bufferise': pipeline 'refbackend' has no stage "
            "'bufferise'\n  hint: did you mean 'bufferize'",
        ),
        (
            ["--pipeline", "refbackend", "--stop-after", "bufferize", "--assert", STAGED],
            "stage 'lower-to-cf' does not run (--start-after/--stop-after leave it out)\n"
            "  hint: the stages that run: generalize-tensor-pad, bufferize",
        ),
        (
            ["--pass-pipeline", "builtin.module(canonicalize)", "--assert", AFTER],
            "'after bufferize' needs --pipeline, not --pass-pipeline",
        ),
        (
            ["--pipeline", "refbackend", "-verify-diagnostics", "--assert", "no-dialect scf"],
            "--assert and -verify-diagnostics exclude each other",
        ),
        (
            ["--pipeline", "refbackend", "--assert", "no-dialect lnalg after bufferize"],
            "assertion 'no-dialect lnalg after bufferize': no dialect 'lnalg' is registered\n"
            "  hint: did you mean 'linalg'?",
        ),
        (
            ["--pipeline", "refbackend", "--assert", "no-op linalg.matmull"],
            "assertion 'no-op linalg.matmull': no op 'linalg.matmull' is registered\n"
            "  hint: did you mean 'linalg.matmul' or",
        ),
        (
            ["--pass-pipeline", "builtin.module(canonicalize)", "--assert", "exactly 0 lnalg.*"],
            "assertion 'exactly 0 lnalg.*': no dialect 'lnalg' is registered\n"
            "  hint: did you mean 'linalg'?",
        ),
    ],
)
def test_mlirpipe_opt_rejects_assertions_it_cannot_check(argv: list[str], message: str) -> None:
    from pytest_mlirpipe.tools import opt

    err = io.StringIO()
    assert opt.run(["-", *argv], io.StringIO(MATMUL), io.StringIO(), err) == 2
    assert message in err.getvalue()


def test_names_that_are_not_registered_are_rejected_by_the_tool_and_the_api() -> None:
    err = io.StringIO()
    status = ir_assert.run(["no-dialect linalg,qwerty"], io.StringIO(MATMUL), io.StringIO(), err)
    assert status == 2
    assert err.getvalue() == (
        "mlirpipe-assert: error: assertion 'no-dialect linalg,qwerty': no dialect 'qwerty' is "
        "registered\n  hint: name a registered dialect\n"
    )
    checked = assert_ir(MATMUL)
    with pytest.raises(UsageError, match=r"no op 'func.cal' is registered\n  hint: did you mean"):
        checked.no_op("func.cal @scipy_cblas_sgemm")
    with pytest.raises(UsageError, match="no dialect 'tensr' is registered"):
        checked.count("tensr.*")
    assert checked.count("*.call") == 1  # a glob's dialect may be any
    with pytest.raises(UsageError, match="no op 'matmul' is registered"):
        checked.exactly(1, "matmul")
    # A dialect the context does not register but the IR holds (a foreign tool's) is known.
    from pytest_mlirpipe.mlir_env import ir, new_context

    context = new_context()
    context.allow_unregistered_dialects = True
    foreign = ir.Module.parse('"foo.bar"() : () -> ()', context)
    assert_ir(foreign).exactly(1, "foo.bar").no_op("foo.baz")  # its ops: not known either
    with pytest.raises(IRAssertionError, match="1 op of dialect foo"):
        assert_ir(foreign).no_dialect("foo")


def test_assert_ir_names_what_it_takes_and_mlirpipe_assert_its_version() -> None:
    from importlib.metadata import version

    from pytest_mlirpipe.lowering.catalog import catalog_for
    from pytest_mlirpipe.lowering.stages import run_stages

    with pytest.raises(TypeError) as err:
        assert_ir(42)
    assert str(err.value) == (
        "assert_ir takes MLIR text (str), an ir.Module or operation, or a stage snapshot "
        "(StageRun.snapshots[i]), not int: 42"
    )
    run = run_stages(MATMUL, catalog_for(()).get("tosa"), source_name="mm.mlir", capture=False)
    with pytest.raises(TypeError, match="holds no IR: run the stages with run_stages"):
        assert_ir(run.snapshots[0])
    out = io.StringIO()
    assert ir_assert.run(["--version"], io.StringIO(), out, io.StringIO()) == 0
    assert out.getvalue() == (
        f"mlirpipe-assert {version('pytest-mlirpipe')}, torch-mlir {version('torch-mlir')}\n"
    )
