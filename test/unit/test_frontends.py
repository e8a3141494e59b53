"""Front ends: input specs, example inputs, model loading, PyTorch and ONNX import."""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

import pytest

from pytest_mlirpipe.errors import MlirpipeError, UsageError
from pytest_mlirpipe.execution.frontends import import_onnx, import_torch
from pytest_mlirpipe.execution.model_file import (
    TensorSpec,
    example_inputs,
    load_model,
    parse_input_spec,
)
from pytest_mlirpipe.execution.refusal import COMPILER, TORCH, refusal_of

torch = pytest.importorskip("torch")


def write_model(tmp_path: Path, source: str, name: str = "model.py") -> Path:
    path = tmp_path / name
    path.write_text(textwrap.dedent(source))
    return path


TINY = """
    import torch

    class Tiny(torch.nn.Module):
        def forward(self, x):
            return x * 2 + 1
"""


# --- input specs -----------------------------------------------------------------------------


def test_input_spec_gives_shapes_and_element_types_and_a_bare_type_is_a_scalar():
    specs = parse_input_spec("2x2xf32,10xi64, 3xi1 ,f32")
    assert specs == [
        TensorSpec((2, 2), "f32"),
        TensorSpec((10,), "i64"),
        TensorSpec((3,), "i1"),
        TensorSpec((), "f32"),
    ]
    assert [str(s) for s in specs] == ["2x2xf32", "10xi64", "3xi1", "f32"]


def test_an_empty_input_spec_means_no_inputs():
    assert parse_input_spec("  ") == []


def test_unknown_element_type_is_reported_with_the_item_and_the_accepted_types():
    with pytest.raises(UsageError) as info:
        parse_input_spec("2x2xf33")
    assert str(info.value) == (
        "error: input spec '2x2xf33': unknown element type 'f33' "
        "(accepted: f32, f64, f16, bf16, i1, i8, i32, i64)\n"
        "  hint: write DIMSxTYPE items separated by commas, e.g. 2x3xf32,10xi64 "
        "(a scalar is its type alone, e.g. f32)"
    )


def test_bad_dimension_and_empty_item_are_reported_together():
    with pytest.raises(UsageError) as info:
        parse_input_spec("2xax3xf32,,-1xi8")
    messages = [p.message for p in info.value.problems]
    assert messages == [
        "input spec '2xax3xf32': dimension 'a' is not a non-negative integer",
        "input spec item 2 of '2xax3xf32,,-1xi8' is empty",
        "input spec '-1xi8': dimension '-1' is not a non-negative integer",
    ]


# --- example inputs --------------------------------------------------------------------------


def test_example_inputs_follow_the_specs_and_repeat_for_a_seed():
    specs = parse_input_spec("2x3xf32,bf16,4xi64,5xi8,6xi1")
    first = example_inputs(specs, seed=3)
    again = example_inputs(specs, seed=3)
    other = example_inputs(specs, seed=4)
    assert [tuple(t.shape) for t in first] == [(2, 3), (), (4,), (5,), (6,)]
    assert [t.dtype for t in first] == [
        torch.float32,
        torch.bfloat16,
        torch.int64,
        torch.int8,
        torch.bool,
    ]
    assert all(torch.equal(a, b) for a, b in zip(first, again, strict=True))
    assert not torch.equal(first[0], other[0])
    assert all(-10 <= int(v) < 10 for t in first[2:4] for v in t.flatten())


# --- model loading ---------------------------------------------------------------------------


def test_a_module_subclass_an_instance_and_a_factory_all_load(tmp_path):
    path = write_model(
        tmp_path, TINY + "\n    tiny = Tiny()\n\n    def make():\n        return Tiny()\n"
    )
    for name in ("Tiny", "tiny", "make"):
        model = load_model(f"{path}::{name}")
        assert isinstance(model, torch.nn.Module)
        assert type(model).__name__ == "Tiny"


def test_two_model_files_with_one_name_do_not_clash(tmp_path):
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    one = write_model(tmp_path / "a", TINY)
    two = write_model(tmp_path / "b", TINY.replace("x * 2", "x * 3"))
    assert type(load_model(f"{one}::Tiny")) is not type(load_model(f"{two}::Tiny"))


def test_a_reference_without_a_name_is_rejected():
    with pytest.raises(UsageError) as info:
        load_model("models/mlp.py")
    assert str(info.value) == (
        "models/mlp.py: error: model reference 'models/mlp.py' does not name a model\n"
        "  hint: write FILE.py::Name, e.g. models/mlp.py::MLP"
    )


def test_a_missing_model_file_is_reported_at_its_path(tmp_path):
    with pytest.raises(UsageError) as info:
        load_model(f"{tmp_path}/nope.py::M")
    assert str(info.value) == (
        f"{tmp_path}/nope.py: error: no model file at this path\n"
        "  hint: the part before '::' is a Python file (relative to the current directory)"
    )


def test_a_model_file_that_is_not_python_is_rejected(tmp_path):
    path = tmp_path / "model.onnx"
    path.write_bytes(b"")
    with pytest.raises(UsageError) as info:
        load_model(f"{path}::M")
    assert str(info.value) == (
        f"{path}: error: a model file is Python source (.py), not '.onnx'\n"
        "  hint: an ONNX model is imported with `mlirpipe import MODEL.onnx --to onnx`"
    )


def test_a_seed_torch_cannot_take_is_a_usage_error():
    with pytest.raises(UsageError) as info:
        example_inputs(parse_input_spec("f32"), seed=2**64)
    assert str(info.value) == (
        f"error: seed {2**64} is out of range: a seed is an integer from -2**63 to 2**64-1\n"
        "  hint: e.g. --seed 0"
    )


def test_an_input_too_large_to_make_is_a_usage_error_naming_its_spec():
    with pytest.raises(UsageError) as info:
        example_inputs(parse_input_spec("f32,100000000000x100000000000xf32"))
    assert str(info.value).startswith(
        "error: input spec '100000000000x100000000000xf32': cannot make a random tensor of "
        "that shape: Storage size calculation overflowed"
    )
    assert str(info.value).endswith(
        "\n  hint: give shapes the model can run with in this machine's memory"
    )


def test_a_syntax_error_in_the_model_file_is_located(tmp_path):
    path = write_model(tmp_path, "import torch\ndef broken(:\n")
    with pytest.raises(UsageError) as info:
        load_model(f"{path}::M")
    text = str(info.value)
    assert text.startswith(f"{path}:2:12: error: the model file has a syntax error: ")
    assert "hint: the file must import on its own, like `python FILE.py` runs it" in text


def test_an_exception_while_importing_the_model_file_is_located_at_its_line(tmp_path):
    path = write_model(tmp_path, "import torch\n\nraise RuntimeError('no GPU here')\n")
    loaded_before = {m for m in sys.modules if m.startswith("_mlirpipe_model_")}
    with pytest.raises(UsageError) as info:
        load_model(f"{path}::M")
    assert str(info.value) == (
        f"{path}:3: error: importing the model file raised RuntimeError: no GPU here\n"
        "  hint: the file must import on its own, like `python FILE.py` runs it "
        "(its directory is not on sys.path)"
    )
    assert {m for m in sys.modules if m.startswith("_mlirpipe_model_")} == loaded_before


def test_a_model_file_that_exits_while_importing_is_a_located_usage_error(tmp_path):
    path = write_model(tmp_path, "import sys\nimport torch\n\nsys.exit(3)\n")
    loaded_before = {m for m in sys.modules if m.startswith("_mlirpipe_model_")}
    with pytest.raises(UsageError) as info:
        load_model(f"{path}::M")
    assert str(info.value) == (
        f"{path}:4: error: importing the model file called sys.exit(3)\n"
        "  hint: the file must import without running a script: put its script part under "
        '`if __name__ == "__main__":`'
    )
    assert {m for m in sys.modules if m.startswith("_mlirpipe_model_")} == loaded_before


def test_a_misspelt_model_name_gets_close_matches(tmp_path):
    path = write_model(tmp_path, TINY)
    with pytest.raises(UsageError) as info:
        load_model(f"{path}::Tiyn")
    assert str(info.value) == (
        f"{path}: error: '{path}' defines no 'Tiyn'\n  hint: did you mean 'Tiny'?"
    )


def test_an_unrelated_missing_name_lists_the_models_the_file_defines(tmp_path):
    path = write_model(tmp_path, TINY)
    with pytest.raises(UsageError) as info:
        load_model(f"{path}::Encoder")
    assert info.value.problems[0].hint == "models it defines: Tiny"


def test_a_name_that_is_not_a_model_is_rejected(tmp_path):
    path = write_model(tmp_path, "import torch\n\nWIDTH = 3\n\nclass Config:\n    pass\n")
    with pytest.raises(UsageError) as info:
        load_model(f"{path}::WIDTH")
    assert str(info.value) == (
        f"{path}: error: 'WIDTH' is an int, not an nn.Module subclass, instance or factory\n"
        "  hint: name a torch.nn.Module subclass, an instance of one, or a function "
        "returning one"
    )
    with pytest.raises(UsageError) as info:
        load_model(f"{path}::Config")
    assert str(info.value).startswith(
        f"{path}:5: error: 'Config' is a class, not an nn.Module subclass, instance or factory"
    )


def test_a_constructor_that_needs_arguments_is_reported_with_a_hint(tmp_path):
    path = write_model(
        tmp_path,
        """
        import torch

        class Wide(torch.nn.Module):
            def __init__(self, width):
                super().__init__()
    """,
    )
    with pytest.raises(UsageError) as info:
        load_model(f"{path}::Wide")
    assert str(info.value) == (
        f"{path}:4: error: calling 'Wide()' raised TypeError: "
        "Wide.__init__() missing 1 required positional argument: 'width'\n"
        "  hint: the model is built with no arguments: give its parameters defaults, or name "
        "a zero-argument function that builds it"
    )


def test_a_constructor_that_raises_is_located_at_the_raising_line(tmp_path):
    path = write_model(
        tmp_path,
        """
        import torch

        def make():
            raise ValueError("weights missing")
    """,
    )
    with pytest.raises(UsageError) as info:
        load_model(f"{path}::make")
    assert str(info.value).startswith(
        f"{path}:5: error: calling 'make()' raised ValueError: weights missing\n"
    )


def test_a_factory_returning_something_else_is_rejected(tmp_path):
    path = write_model(tmp_path, "def make():\n    return 42\n")
    with pytest.raises(UsageError) as info:
        load_model(f"{path}::make")
    assert str(info.value) == (
        f"{path}:1: error: 'make()' returned an int, not an nn.Module\n"
        "  hint: a factory function must return the torch.nn.Module to import"
    )


# --- PyTorch import --------------------------------------------------------------------------


class _Tiny(torch.nn.Module):
    def forward(self, x):
        return x * 2 + 1


class _Branchy(torch.nn.Module):
    def forward(self, x):
        if x.sum() > 0:
            return x
        return -x


class _Bessel(torch.nn.Module):
    def forward(self, x):
        return torch.special.i0(x)


@pytest.mark.parametrize(
    ("to", "op"),
    [("torch", "torch.aten.mul.Scalar"), ("linalg", "linalg.generic"), ("tosa", "tosa.mul")],
)
def test_a_module_imports_as_func_forward_at_each_level(to, op):
    text = import_torch(_Tiny(), example_inputs(parse_input_spec("2x2xf32")), to)
    assert "func.func @forward(" in text
    assert op in text


def test_an_unknown_import_target_is_rejected():
    with pytest.raises(UsageError) as info:
        import_torch(_Tiny(), [], "stablehlo")
    assert str(info.value) == (
        "error: unknown import target 'stablehlo'\n  hint: accepted targets: torch, linalg, tosa"
    )


def test_a_module_torch_export_cannot_trace_says_so_with_torchs_first_line():
    with pytest.raises(MlirpipeError) as info:
        import_torch(_Branchy(), [torch.ones(2)], "torch")
    text = str(info.value)
    assert text.startswith(
        "error: module '_Branchy' could not be exported by torch.export: "
        "GuardOnDataDependentSymNode: Could not guard on data-dependent expression"
    )
    assert (
        "\n  hint: torch.export traces forward() once with the example inputs: branch on "
        "tensor values with torch.cond" in text
    )
    refusal = refusal_of(info.value)
    assert (refusal.by, refusal.stage) == (TORCH, "export")


def test_a_module_that_cannot_be_lowered_names_the_op_and_its_source_line():
    with pytest.raises(MlirpipeError) as info:
        import_torch(_Bessel(), [torch.ones(2)], "linalg")
    problem = info.value.problems[0]
    assert problem.message.startswith(
        "module '_Bessel' was exported but could not be lowered to linalg-on-tensors: "
        "failed to legalize operation 'torch.operator'"
    )
    assert "torch.aten.i0" in problem.message
    assert problem.location is not None and problem.location.path == __file__
    assert problem.hint == (
        "import it with to='torch' (`--to torch`) and run "
        "`mlirpipe stages FILE --pipeline torch-to-linalg` to see the failing pass"
    )
    refusal = refusal_of(info.value)
    assert (refusal.by, refusal.stage, refusal.pass_name) == (
        COMPILER,
        "import",
        "torch-backend-to-linalg-on-tensors-backend-pipeline",
    )


class _ToComplex128(torch.nn.Module):
    def forward(self, x):
        return x.to(torch.complex128)


def test_an_exception_inside_torch_mlirs_fx_importer_is_its_refusal():
    with pytest.raises(MlirpipeError) as info:
        import_torch(_ToComplex128(), [torch.ones(2)], "linalg")
    assert info.value.format().startswith(
        "error: module '_ToComplex128' was exported but torch-mlir's FX importer failed on it: "
        "KeyError: torch.complex128 (in torch-mlir's <lambda>)\n"
        "  hint: the FX importer cannot express something in this graph (an op, a dtype, a "
        "literal): torch-mlir's limit; torch_mlir.fx.export_and_import(model, *inputs) shows "
        "its traceback"
    )
    refusal = refusal_of(info.value)
    assert (refusal.by, refusal.stage, refusal.pass_name) == (COMPILER, "import", "")
    assert refusal.reason.startswith("FX importer: KeyError: torch.complex128")


# --- ONNX import -----------------------------------------------------------------------------


def _matmul_model(b_shape: tuple[int, int] = (3, 4)):
    onnx = pytest.importorskip("onnx")
    from onnx import TensorProto, helper

    graph = helper.make_graph(
        [helper.make_node("MatMul", ["a", "b"], ["c"])],
        "mm",
        [
            helper.make_tensor_value_info("a", TensorProto.FLOAT, [2, 3]),
            helper.make_tensor_value_info("b", TensorProto.FLOAT, list(b_shape)),
        ],
        [helper.make_tensor_value_info("c", TensorProto.FLOAT, None)],
    )
    return onnx, helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def test_an_onnx_matmul_imports_as_a_torch_operator():
    _, model = _matmul_model()
    text = import_onnx(model)
    assert 'torch.operator "onnx.MatMul"' in text
    assert "!torch.vtensor<[2,4],f32>" in text  # shape inference typed the output


def test_an_onnx_file_imports_from_its_path(tmp_path):
    onnx, model = _matmul_model()
    onnx.save(model, tmp_path / "mm.onnx")
    assert 'torch.operator "onnx.MatMul"' in import_onnx(tmp_path / "mm.onnx")


def test_onnx_import_without_the_onnx_package_says_how_to_install_it(monkeypatch):
    monkeypatch.setitem(sys.modules, "onnx", None)
    with pytest.raises(MlirpipeError) as info:
        import_onnx("model.onnx")
    assert str(info.value) == (
        "error: importing an ONNX model needs the 'onnx' package, which is not installed\n"
        "  hint: pip install onnx (or pip install 'pytest-mlirpipe[onnx]')"
    )


def test_a_missing_onnx_file_is_reported_at_its_path(tmp_path):
    pytest.importorskip("onnx")
    with pytest.raises(UsageError) as info:
        import_onnx(tmp_path / "missing.onnx")
    assert str(info.value) == (
        f"{tmp_path}/missing.onnx: error: cannot read the ONNX model: No such file or directory"
        "\n  hint: check the path"
    )


def test_a_file_that_is_not_onnx_is_rejected(tmp_path):
    pytest.importorskip("onnx")
    path = tmp_path / "bad.onnx"
    path.write_bytes(b"\xff\xff\xff\xff")
    with pytest.raises(UsageError) as info:
        import_onnx(path)
    assert str(info.value) == (
        f"{path}: error: not an ONNX model: Error parsing message with type "
        "'onnx.ModelProto': Wire format was corrupt\n"
        "  hint: give a model saved with onnx.save (a serialized ModelProto)"
    )


@pytest.mark.parametrize(
    ("data", "what"), [(b"", "the file is empty"), (b"\x08\x07", "it holds no graph")]
)
def test_bytes_that_parse_as_a_model_without_a_graph_are_rejected(tmp_path, data, what):
    pytest.importorskip("onnx")
    path = tmp_path / "m.onnx"
    path.write_bytes(data)  # an ir_version field alone, or nothing: a valid empty ModelProto
    with pytest.raises(UsageError) as info:
        import_onnx(path)
    assert str(info.value) == (
        f"{path}: error: not an ONNX model: {what}\n"
        "  hint: give a model saved with onnx.save (a serialized ModelProto)"
    )


def test_an_onnx_model_with_inconsistent_shapes_fails_shape_inference():
    _, model = _matmul_model(b_shape=(5, 4))
    with pytest.raises(MlirpipeError) as info:
        import_onnx(model)
    text = str(info.value)
    assert text.startswith("error: ONNX shape inference failed: [ShapeInferenceError]")
    assert "Incompatible dimensions for matrix multiplication" in text
    assert text.endswith(
        "\n  hint: onnx.checker.check_model(model, full_check=True) shows every problem"
    )


def test_an_onnx_output_no_node_produces_is_an_importer_error():
    onnx = pytest.importorskip("onnx")
    from onnx import TensorProto, helper

    graph = helper.make_graph(
        [helper.make_node("Relu", ["a"], ["c"])],
        "g",
        [helper.make_tensor_value_info("a", TensorProto.FLOAT, [2])],
        [helper.make_tensor_value_info("z", TensorProto.FLOAT, [2])],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    assert onnx.shape_inference.infer_shapes(model, strict_mode=True)
    with pytest.raises(MlirpipeError) as info:
        import_onnx(model)
    assert str(info.value) == (
        "error: the ONNX importer failed: Non topologically produced ONNX graph output 'z'\n"
        "  hint: onnx.checker.check_model(model, full_check=True) shows what is wrong"
    )


def test_an_untyped_custom_op_output_is_an_error_not_a_warning():
    pytest.importorskip("onnx")
    from onnx import TensorProto, helper

    graph = helper.make_graph(
        [
            helper.make_node("Frob", ["a"], ["b"], domain="x.y"),
            helper.make_node("Relu", ["b"], ["c"]),
        ],
        "g",
        [helper.make_tensor_value_info("a", TensorProto.FLOAT, [2])],
        [helper.make_tensor_value_info("c", TensorProto.FLOAT, [2])],
    )
    model = helper.make_model(
        graph, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("x.y", 1)]
    )
    with pytest.raises(MlirpipeError) as info:
        import_onnx(model)
    assert str(info.value) == (
        "error: the ONNX model has a value of unknown type (a node output that shape "
        "inference could not type)\n"
        "  hint: shape inference cannot type custom-domain ops: declare their outputs in "
        "graph.value_info"
    )


class _FloorDivisions(torch.nn.Module):
    def forward(self, a, b, f):
        return a // b, torch.div(a, -1073741824, rounding_mode="floor"), f // 3.0


def test_integer_floor_division_is_decomposed_into_exact_ops_and_float_division_is_kept():
    from pytest_mlirpipe.execution.frontends.integer_division import (
        divides_integers,
        exact_floor_division,
    )

    a = torch.tensor([2**63 - 2, -(2**63 - 1), 2**30, -3, 0, 7])
    b = torch.tensor([2**30, -(2**30), 3, -7, 5, -7])
    f = torch.tensor([-4.5, 7.0])
    program = torch.export.export(_FloorDivisions(), (a, b, f))
    assert divides_integers(program)
    decomposed = program.run_decompositions(exact_floor_division())
    assert not divides_integers(decomposed)
    floors = [n for n in decomposed.graph.nodes if n.target == torch.ops.aten.floor_divide.default]
    assert [n.meta["val"].dtype for n in floors] == [torch.float32]  # the float one, as it was
    for got, want in zip(decomposed.module()(a, b, f), _FloorDivisions()(a, b, f), strict=True):
        assert torch.equal(got, want)
