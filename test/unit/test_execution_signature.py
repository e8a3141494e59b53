"""Entry signatures from tensor types, and the ABI read from a lowered module."""

from __future__ import annotations

import pytest

from pytest_mlirpipe.errors import MlirpipeError
from pytest_mlirpipe.execution.native.jit import Abi, detect_abi
from pytest_mlirpipe.execution.native.signature import entry_signature, parse_tensor_type


def test_builtin_and_torch_tensor_types_parse_alike() -> None:
    assert parse_tensor_type("tensor<2x?xf32>", "x").shape == (2, None)
    assert str(parse_tensor_type("!torch.vtensor<[2,-1],si64>", "x")) == "2x?xi64"
    assert parse_tensor_type("tensor<i1>", "m").shape == ()


def test_a_non_tensor_argument_is_refused_with_its_name() -> None:
    with pytest.raises(MlirpipeError) as info:
        parse_tensor_type("memref<2xf32>", "buf")
    assert "error: input 'buf' has type memref<2xf32>, which is not a ranked tensor" in (
        info.value.format()
    )


def test_the_entry_is_the_only_public_function() -> None:
    sig = entry_signature(
        "func.func private @helper(%a: tensor<2xf32>) -> tensor<2xf32> {"
        " return %a : tensor<2xf32> }\n"
        "func.func @main(%a: tensor<2xf32>, %b: tensor<i64>) -> tensor<2xf32> {"
        " return %a : tensor<2xf32> }",
        ["x"],
    )
    assert str(sig) == "@main(x: 2xf32, arg1: i64) -> (2xf32)"


def test_two_public_functions_are_refused() -> None:
    two = "func.func @a() { return }\nfunc.func @b() { return }\n"
    with pytest.raises(MlirpipeError) as info:
        entry_signature(two)
    assert "error: the model's MLIR has 2 public functions (@a, @b); the entry point must be" in (
        info.value.format()
    )


SIG = entry_signature(
    "func.func @forward(%a: tensor<2xf32>) -> tensor<2xf32> { return %a : tensor<2xf32> }"
)


@pytest.mark.parametrize(
    ("llvm", "abi"),
    [
        (
            "llvm.func @forward(%a: !llvm.ptr) {\n"
            "llvm.func @_mlir_ciface_forward(%a: !llvm.ptr) {\n"
            "llvm.func @_mlir_ciface_refbackend_consume_func_return_mrf32(!llvm.ptr)\n",
            Abi.CALLBACK,
        ),
        (
            "llvm.func @forward(%a: !llvm.ptr) -> !llvm.struct<(ptr)> {\n"
            "llvm.func @_mlir_ciface_forward(%r: !llvm.ptr, %a: !llvm.ptr) {\n",
            Abi.RETURNED,
        ),
        (
            "llvm.func @forward(%a: !llvm.ptr, %o: !llvm.ptr) {\n"
            "llvm.func @_mlir_ciface_forward(%a: !llvm.ptr, %o: !llvm.ptr) {\n",
            Abi.DESTINATION,
        ),
    ],
)
def test_the_abi_is_read_from_the_llvm_functions(llvm: str, abi: Abi) -> None:
    assert detect_abi(llvm, SIG).abi is abi


def test_an_entry_point_without_results_has_a_callback_without_a_suffix() -> None:
    llvm = (
        "llvm.func @forward(%a: !llvm.ptr) {\n"
        "llvm.func @_mlir_ciface_forward(%a: !llvm.ptr) {\n"
        "llvm.func @_mlir_ciface_refbackend_consume_func_return()\n"
    )
    none = entry_signature("func.func @forward(%a: tensor<2xf32>) { return }")
    found = detect_abi(llvm, none)
    assert (found.abi, found.consume) == (Abi.CALLBACK, "refbackend_consume_func_return")


def test_a_module_without_c_interface_is_refused() -> None:
    with pytest.raises(MlirpipeError) as info:
        detect_abi("llvm.func @forward(%a: !llvm.ptr) {\n", SIG)
    assert (
        "error: the lowered module has no C interface for @forward (no @_mlir_ciface_forward)"
        in info.value.format()
    )
