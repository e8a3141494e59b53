"""The `mlirpipe` command, run in-process: list, stages, import and passes."""

from __future__ import annotations

import io
import re
import textwrap
from pathlib import Path

import pytest

from pytest_mlirpipe.cli.main import run
from pytest_mlirpipe.lowering.catalog import catalog_for

ADD = """\
func.func @add(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
  %e = tensor.empty() : tensor<4xf32>
  %r = linalg.add ins(%a, %b : tensor<4xf32>, tensor<4xf32>)
                  outs(%e : tensor<4xf32>) -> tensor<4xf32>
  return %r : tensor<4xf32>
}
"""

HEADER = re.compile(r"^// ===== stage (\d+)/(\d+): ([a-z0-9-]+) \(\d+\.\d+ s\) =====\n", re.M)


def mlirpipe(*argv: str | Path, stdin: str = "") -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    status = run([str(a) for a in argv], io.StringIO(stdin), out, err)
    return status, out.getvalue(), err.getvalue()


def test_without_a_command_it_asks_for_one():
    status, _, err = mlirpipe()
    assert status == 2
    assert err == (
        "mlirpipe: error: the following arguments are required: COMMAND\n"
        "  hint: see `mlirpipe --help`\n"
    )


@pytest.mark.parametrize(
    "command",
    ["list", "sweep", "passes", "showcase", "init", "stages", "merge", "update-checks", "import"],
)
def test_an_unknown_flag_is_the_usage_error_of_its_command(command):
    assert mlirpipe(command, "--bogus") == (
        2,
        "",
        f"mlirpipe {command}: error: unrecognized arguments: --bogus\n"
        f"  hint: see `mlirpipe {command} --help`\n",
    )


@pytest.mark.parametrize(
    ("argv", "command"),
    [
        (["stages", "-", "--pipeline", "nope"], "stages"),
        (["sweep", "--pipeline", "nope"], "sweep"),
        (["run", "absent.py::M", "--inputs", "2xf32", "--pipeline", "refbackend,nope"], "run"),
    ],
)
def test_an_unknown_pipeline_is_a_usage_error_before_anything_runs(argv, command):
    status, out, err = mlirpipe(*argv)
    assert (status, out) == (2, "")
    known = ", ".join(catalog_for([]).names())
    assert err == (
        f"mlirpipe {command}: error: --pipeline: unknown pipeline 'nope'\n"
        f"  hint: known pipelines: {known}\n"
    )


def test_a_pipelines_dir_that_is_not_there_is_a_usage_error(tmp_path):
    status, out, err = mlirpipe("list", "--pipelines-dir", tmp_path / "absent")
    assert (status, out) == (2, "")
    assert err == (
        f"mlirpipe list: error: --pipelines-dir {tmp_path / 'absent'}: no such folder\n"
        "  hint: give a folder of pipeline files (*.toml), or leave the flag out\n"
    )


# --- list ------------------------------------------------------------------------------------


def test_list_shows_each_pipeline_with_its_levels_file_and_stages():
    status, out, err = mlirpipe("list")
    assert (status, err) == (0, "")
    assert "refbackend: linalg-on-tensors -> llvm\n" in out
    assert re.search(r"\n  file: \S*pipelines/refbackend\.toml\n", out)
    assert re.search(
        r"\n    3\. finalizing-bufferize: function signatures become memrefs.*\n"
        r"       passes: one-shot-bufferize\{copy-before-write bufferize-function-boundaries",
        out,
    )


def test_list_marks_the_stages_whose_cpu_table_applies_and_says_why(monkeypatch):
    monkeypatch.setenv("MLIRPIPE_CPU_FEATURES", "avx512f")
    status, out, _ = mlirpipe("list")
    assert status == 0
    assert "\n    6. pack-panels (cpu.avx512f): B of each f32 matmul in panels of 64" in out
    assert out.endswith(
        "\n(cpu.F: the stage's [stage.cpu.F] table, which $MLIRPIPE_CPU_FEATURES chose; "
        "MLIRPIPE_CPU_FEATURES=... sets the features for a run)\n"
    )
    monkeypatch.setenv("MLIRPIPE_CPU_FEATURES", "avx2")
    status, out, _ = mlirpipe("list")
    assert status == 0 and "(cpu." not in out
    assert "\n    6. pack-panels: B of each f32 matmul in panels of 16" in out


def test_features_that_are_not_feature_names_are_refused(monkeypatch):
    monkeypatch.setenv("MLIRPIPE_CPU_FEATURES", "avx-512f,fma")
    status, _, err = mlirpipe("list")
    assert status == 1
    assert err == (
        "error: $MLIRPIPE_CPU_FEATURES='avx-512f,fma': 'avx-512f' is not a CPU feature name\n"
        "  hint: name features as the host lists them, e.g. MLIRPIPE_CPU_FEATURES=avx2,fma "
        "(Linux: the flags in /proc/cpuinfo; empty: no feature)\n"
    )
    monkeypatch.setenv("MLIRPIPE_CPU_FEATURES", "a.b c-d")
    assert "'a.b', 'c-d' are not CPU feature names" in mlirpipe("list")[2]


def test_list_shows_what_a_pipeline_extends(tmp_path):
    (tmp_path / "child.toml").write_text(
        textwrap.dedent("""\
        [pipeline]
        name = "refbackend-checked"
        description = "refbackend, then no linalg may be left"
        extends = "refbackend"

        [[stage]]
        name = "no-linalg-left"
        reason = "everything became loops"
        passes = ["canonicalize"]
    """)
    )
    status, out, _ = mlirpipe("list", "--pipelines-dir", tmp_path)
    assert status == 0
    block = out.split("refbackend-checked: ", 1)[1].split("\n\n", 1)[0]
    assert f"\n  file: {tmp_path / 'child.toml'}\n  extends: refbackend\n" in block
    assert "no-linalg-left: everything became loops\n       passes: canonicalize" in block


def test_list_reports_a_broken_pipeline_file_instead_of_leaving_its_pipeline_out(tmp_path):
    (tmp_path / "bad.toml").write_text(
        '[pipeline]\nname = "bad"\ninput = "linalg-on-tensors"\noutput = "llvm"\n\n'
        '[[stage]]\nname = "s"\nreason = "r"\npases = ["cse"]\n'
    )
    status, out, err = mlirpipe("list", "--pipelines-dir", tmp_path)
    assert status != 0 and out == ""
    assert f"{tmp_path / 'bad.toml'}:9:1: error: unknown key 'pases' in [[stage]]" in err


# --- stages ----------------------------------------------------------------------------------


def test_stages_prints_a_header_and_the_ir_for_every_stage():
    names = catalog_for([]).get("refbackend").stage_names()
    status, out, err = mlirpipe("stages", "-", "--pipeline", "refbackend", stdin=ADD)
    assert (status, err) == (0, "")
    headers = HEADER.findall(out)
    assert [h[2] for h in headers] == names
    assert [h[:2] for h in headers] == [(str(i), str(len(names))) for i in range(1, len(names) + 1)]
    assert "llvm.func @add(" in out.rsplit("=====\n", 1)[1]


def test_stages_honours_start_after_and_stop_after():
    total = len(catalog_for([]).get("refbackend").stages)
    status, out, _ = mlirpipe(
        "stages",
        "-",
        "--pipeline",
        "refbackend",
        "--start-after",
        "generalize-tensor-pad",
        "--stop-after",
        "bufferize",
        stdin=ADD,
    )
    assert status == 0
    assert HEADER.findall(out) == [("2", str(total), "bufferize")]
    assert "memref.alloc()" in out


def test_stages_diff_shows_what_each_stage_changed():
    status, out, _ = mlirpipe(
        "stages",
        "-",
        "--pipeline",
        "refbackend",
        "--diff",
        "--stop-after",
        "finalizing-bufferize",
        stdin=ADD,
    )
    assert status == 0
    first, second, third = re.split(HEADER, out)[4::4]
    assert first == "// (no change)\n"  # no tensor.pad: reformatting alone is not a change
    assert second.startswith("--- after generalize-tensor-pad\n+++ after bufferize\n")
    assert "\n-    %1 = linalg.add ins(%arg0, %arg1 : tensor<4xf32>" in second
    assert "\n+    %0 = bufferization.to_buffer" in second
    assert "\n+  func.func @add(%arg0: memref<4xf32>" in third


def test_stages_diff_of_the_first_stage_is_against_the_input():
    status, out, _ = mlirpipe(
        "stages",
        "-",
        "--pipeline",
        "refbackend",
        "--diff",
        "--stop-after",
        "bufferize",
        "--start-after",
        "generalize-tensor-pad",
        stdin=ADD,
    )
    assert status == 0
    assert "--- input\n+++ after bufferize\n" in out


def test_a_failing_stage_prints_the_stage_failure():
    source = textwrap.dedent("""\
        func.func @forward(%arg0: !torch.vtensor<[4],f32>) -> !torch.vtensor<[4],f32> {
          %0 = torch.operator "torch.aten.i0"(%arg0)
              : (!torch.vtensor<[4],f32>) -> !torch.vtensor<[4],f32>
          return %0 : !torch.vtensor<[4],f32>
        }
    """)
    status, out, err = mlirpipe("stages", "-", "--pipeline", "torch-to-linalg", stdin=source)
    assert (status, out) == (1, "")
    assert err.startswith("error: pipeline 'torch-to-linalg', stage 'torch-backend' failed: ")
    assert "\n<stdin>:2:8: error: failed to legalize operation 'torch.operator'" in err


# --- import ----------------------------------------------------------------------------------


@pytest.fixture
def tiny_model(tmp_path: Path) -> Path:
    pytest.importorskip("torch")
    path = tmp_path / "tiny.py"
    path.write_text(
        textwrap.dedent("""\
        import torch

        class Tiny(torch.nn.Module):
            def forward(self, x, n):
                return x * 2 + n.sum()
    """)
    )
    return path


def test_import_of_a_pytorch_model_prints_func_forward(tiny_model):
    status, out, err = mlirpipe(
        "import", f"{tiny_model}::Tiny", "--inputs", "2x2xf32,3xi64", "--to", "torch"
    )
    assert (status, err) == (0, "")
    assert (
        "func.func @forward(%arg0: !torch.vtensor<[2,2],f32>, "
        "%arg1: !torch.vtensor<[3],si64>)" in out
    )


def test_import_writes_to_the_output_file(tiny_model, tmp_path):
    target = tmp_path / "tiny.mlir"
    status, out, _ = mlirpipe(
        "import", f"{tiny_model}::Tiny", "--inputs", "2x2xf32,3xi64", "--to", "linalg", "-o", target
    )
    assert (status, out) == (0, "")
    text = target.read_text()
    assert "func.func @forward(%arg0: tensor<2x2xf32>, %arg1: tensor<3xi64>)" in text
    assert "linalg.generic" in text


def test_import_of_an_onnx_model_prints_torch_operators(tmp_path):
    onnx = pytest.importorskip("onnx")
    from onnx import TensorProto, helper

    graph = helper.make_graph(
        [helper.make_node("MatMul", ["a", "b"], ["c"])],
        "mm",
        [
            helper.make_tensor_value_info("a", TensorProto.FLOAT, [2, 3]),
            helper.make_tensor_value_info("b", TensorProto.FLOAT, [3, 4]),
        ],
        [helper.make_tensor_value_info("c", TensorProto.FLOAT, None)],
    )
    onnx.save(
        helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), tmp_path / "mm.onnx"
    )
    status, out, err = mlirpipe("import", tmp_path / "mm.onnx", "--to", "onnx")
    assert (status, err) == (0, "")
    assert 'torch.operator "onnx.MatMul"' in out


def test_an_onnx_model_with_a_pytorch_target_is_rejected():
    status, _, err = mlirpipe("import", "mm.onnx", "--to", "linalg")
    assert status == 2
    assert err == (
        "mlirpipe import: mm.onnx: error: an ONNX model imports only with --to onnx,"
        " not --to linalg\n"
        "  hint: then lower it with `mlirpipe stages OUT --pipeline onnx-linalg`\n"
    )


def test_an_onnx_model_rejects_inputs():
    status, _, err = mlirpipe("import", "mm.onnx", "--to", "onnx", "--inputs", "2xf32")
    assert status == 2
    assert err == (
        "mlirpipe import: mm.onnx: error: --inputs is for a PyTorch model; an ONNX model declares "
        "its inputs\n  hint: drop --inputs\n"
    )


def test_a_pytorch_model_with_the_onnx_target_is_rejected():
    status, _, err = mlirpipe("import", "m.py::M", "--to", "onnx", "--inputs", "2xf32")
    assert status == 2
    assert err == (
        "mlirpipe import: m.py::M: error: --to onnx needs an ONNX model file (MODEL.onnx)\n"
        "  hint: a PyTorch model imports with --to torch, --to linalg or --to tosa\n"
    )


def test_a_pytorch_model_needs_inputs():
    status, _, err = mlirpipe("import", "m.py::M", "--to", "torch")
    assert status == 2
    assert err == (
        "mlirpipe import: m.py::M: error: a PyTorch model needs --inputs, the shapes to"
        " trace it with\n"
        "  hint: e.g. --inputs 2x3xf32,10xi64 (one item per argument of forward)\n"
    )


def test_bad_inputs_are_rejected_before_the_model_is_loaded():
    status, _, err = mlirpipe("import", "missing.py::M", "--to", "torch", "--inputs", "2xf99")
    assert status == 2
    assert err.startswith("mlirpipe import: error: input spec '2xf99': unknown element type 'f99'")


def test_an_unknown_target_is_rejected_with_the_choices():
    status, _, err = mlirpipe("import", "m.py::M", "--to", "llvm")
    assert status == 2
    assert err.startswith("mlirpipe import: error: argument --to: invalid choice: 'llvm'")
    assert "onnx" in err


# --- passes ----------------------------------------------------------------------------------


def test_passes_lists_upstream_torch_mlir_and_python_passes():
    status, out, err = mlirpipe("passes")
    assert (status, err) == (0, "")
    lines = out.splitlines()
    assert "canonicalize" in lines
    assert "refback-munge-calling-conventions" in lines
    assert any(ln.startswith("mlirpipe-forbid-ops (python)  ") for ln in lines)


def test_passes_grep_keeps_matching_names():
    status, out, _ = mlirpipe("passes", "--grep", "MUNGE")
    assert status == 0
    assert out.splitlines() == ["refback-munge-calling-conventions", "refback-munge-memref-copy"]


def test_passes_grep_without_a_match_is_an_error_with_close_matches():
    status, out, err = mlirpipe("passes", "--grep", "canonicalise")
    assert (status, out) == (1, "")
    assert err.startswith(
        "error: no pass name contains 'canonicalise'\n  hint: did you mean 'canonicalize'"
    )


SPLIT_CASES = (
    "// Two cases in one file.\n"
    "// RUN: mlirpipe-opt %s --split-input-file --pipeline refbackend --stop-after bufferize"
    " | filecheck %s\n"
    "// CHECK-LABEL: func.func @a\n"
    "// CHECK-LABEL: func.func @b\n"
    "#m = affine_map<(d0) -> (d0)>\n"
    "func.func @a(%x: tensor<4xf32>) -> tensor<4xf32> { return %x : tensor<4xf32> }\n"
    "// -----\n"
    "#m = affine_map<(d0) -> (d0)>\n"
    "func.func @b(%x: tensor<4xf32>) -> tensor<4xf32> { return %x : tensor<4xf32> }\n"
)


def test_showcase_tables_a_split_input_file_by_its_first_case(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "split.mlir").write_text(SPLIT_CASES)
    broken = tmp_path / "broken.mlir"
    broken.write_text("// RUN: mlirpipe-opt %s --pipeline refbackend | filecheck %s\nfunc.func @")

    status, out, err = mlirpipe("showcase", tmp_path)

    assert (status, err) == (1, "")
    assert "checks: 1 RUN lines with FileCheck -> PASS" in out
    assert f"{broken}:2:12: error: cannot parse MLIR: @ identifier expected to start with" in out
    assert out.endswith("1 of 2 seed files passed their checks.\n")


def test_showcase_refuses_a_file_that_is_not_text_before_it_lowers_anything(tmp_path):
    (tmp_path / "a.mlir").write_text(SPLIT_CASES)
    (tmp_path / "b.mlir").write_bytes(b"ML\xefR\x00\xd0")  # MLIR bytecode, say

    status, out, err = mlirpipe("showcase", tmp_path)

    assert (status, out) == (2, "")
    assert err.splitlines()[0] == (
        f"mlirpipe showcase: {tmp_path / 'b.mlir'}:1:3: error: input is not UTF-8 text (byte 0xef)"
    )


def test_version_prints_the_installed_version():
    from importlib.metadata import version

    assert mlirpipe("--version") == (0, f"mlirpipe {version('pytest-mlirpipe')}\n", "")


def test_showcase_runs_the_checks_of_a_relative_folder_outside_any_lit_suite(tmp_path, monkeypatch):
    (tmp_path / "seeds").mkdir()
    (tmp_path / "seeds" / "split.mlir").write_text(SPLIT_CASES)
    (tmp_path / "work").mkdir()
    monkeypatch.chdir(tmp_path / "work")

    status, out, err = mlirpipe("showcase", "../seeds")

    assert (status, err) == (0, "")
    assert "checks: 1 RUN lines with FileCheck -> PASS" in out
    assert out.endswith("1 of 1 seed files passed their checks.\n")


RESOURCE = """\
// RUN: mlirpipe-opt %s --pipeline refbackend | filecheck %s
// CHECK: llvm.func @f
func.func @f(%a: tensor<3x4xf32>) -> tensor<3x4xf32> {
  %c = arith.constant dense_resource<torch_tensor_3_4_torch.float32> : tensor<3x4xf32>
  %e = tensor.empty() : tensor<3x4xf32>
  %r = linalg.add ins(%a, %c : tensor<3x4xf32>, tensor<3x4xf32>)
                  outs(%e : tensor<3x4xf32>) -> tensor<3x4xf32>
  return %r : tensor<3x4xf32>
}
{-#
  dialect_resources: {
    builtin: {
      torch_tensor_3_4_torch.float32: "0x040000000000803F0000803F0000803F0000803F"
    }
  }
#-}
"""


def test_showcase_counts_ops_per_dialect_as_the_stage_report_does(tmp_path, monkeypatch):
    from pytest_mlirpipe.lowering.stage_report import report_stages

    monkeypatch.chdir(tmp_path)
    (tmp_path / "resource.mlir").write_text(RESOURCE)

    status, out, err = mlirpipe("showcase", tmp_path / "resource.mlir")

    assert (status, err) == (0, "")
    assert "torch_tensor" not in out
    report = report_stages(RESOURCE, catalog_for([]).get("refbackend"), source_name="r.mlir")
    for view in report.views[1:]:
        counts = ", ".join(f"{d} {n}" for d, n in sorted(view.counts.items()))
        assert re.search(rf"^   {view.name} +\d+\.\d  {re.escape(counts)}$", out, re.M), view.name


def test_showcase_says_so_when_a_stage_printed_ir_the_bindings_cannot_parse():
    from pytest_mlirpipe.cli.showcase import _stage_table
    from pytest_mlirpipe.model import LazyText, Snapshot

    table = _stage_table([Snapshot("own-tool", (), 0.001, text=LazyText("mine.op %x {"))])

    assert table.splitlines()[1].split() == [
        "own-tool",
        "1.0",
        "(IR",
        "the",
        "bindings",
        "cannot",
        "parse)",
    ]
