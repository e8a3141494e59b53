"""torch.compile(backend="mlirpipe") and `mlirpipe run`, both against torch eager."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch
from cli_run import MODEL, run_cli

from pytest_mlirpipe.backend import make_backend


def test_torch_compile_backend_matches_eager() -> None:
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(8, 4), torch.nn.ReLU(), torch.nn.Linear(4, 2))
    x = torch.randn(3, 8)
    with torch.no_grad():
        compiled = torch.compile(model, backend="mlirpipe", dynamic=False)
        torch.testing.assert_close(compiled(x), model(x), rtol=1e-5, atol=1e-6)


def test_torch_compile_backend_runs_a_chosen_pipeline_with_several_results() -> None:
    def f(a: torch.Tensor, b: torch.Tensor):
        return a * b, (a - b).sum()

    a, b = torch.randn(5), torch.randn(5)
    torch._dynamo.reset()
    compiled = torch.compile(f, backend=make_backend("tosa"), dynamic=False)
    prod, total = compiled(a, b)
    torch.testing.assert_close(prod, a * b)
    torch.testing.assert_close(total, (a - b).sum())


def test_run_prints_one_row_per_pipeline_and_writes_json(tmp_path: Path) -> None:
    (tmp_path / "m.py").write_text(MODEL)
    report = tmp_path / "out.json"
    code, out, err = run_cli(
        [
            "run",
            f"{tmp_path}/m.py::MM",
            "--inputs",
            "8x8xf32,8x8xf32",
            "--pipeline",
            "refbackend,refbackend-dps",
            "--blocks",
            "2",
            "--flops",
            "1024",
            "--json",
            str(report),
        ]
    )
    assert code == 0, err
    lines = out.splitlines()
    assert lines[0].split() == [
        "case", "pipeline", "verdict", "max", "err", "median", "torch", "ratio", "GFLOP/s", "notes"
    ]  # fmt: skip
    assert [ln.split()[1:3] for ln in lines[2:4]] == [
        ["refbackend", "PASS"],
        ["refbackend-dps", "PASS"],
    ]
    data = json.loads(report.read_text())
    assert [r["pipeline"] for r in data["results"]] == ["refbackend", "refbackend-dps"]
    assert all(
        r["timing"]["median"] > 0 and r["torch_timing"]["blocks"] == 2 for r in data["results"]
    )


def test_run_without_inputs_for_a_torch_model_says_what_to_give(tmp_path: Path) -> None:
    (tmp_path / "m.py").write_text(MODEL)
    code, _, err = run_cli(["run", f"{tmp_path}/m.py::MM"])
    assert code == 2
    assert "error: a PyTorch model needs --inputs, the shapes to run it with" in err


def test_torch_compile_backend_compiles_again_for_a_second_input_shape() -> None:
    def f(a: torch.Tensor) -> torch.Tensor:
        return torch.relu(a) * 2.0

    torch._dynamo.reset()
    compiled = torch.compile(f, backend="mlirpipe")
    with torch.no_grad():
        for n in (4, 6, 9):  # the second shape makes dynamo pass a symbolic size
            a = torch.randn(n, 3)
            torch.testing.assert_close(compiled(a), f(a))


def test_torch_compile_backend_runs_a_training_graph_in_eager_and_says_so() -> None:
    torch.manual_seed(0)
    model = torch.nn.Linear(4, 2)
    x = torch.randn(3, 4)
    torch._dynamo.reset()
    compiled = torch.compile(model, backend="mlirpipe", dynamic=False)
    with pytest.warns(UserWarning, match="mlirpipe: this graph runs in torch eager, not natively"):
        compiled(x).sum().backward()
    expected = torch.nn.Linear(4, 2)
    expected.load_state_dict(model.state_dict())
    expected(x).sum().backward()
    torch.testing.assert_close(model.weight.grad, expected.weight.grad)


WHILE_LOOP = (
    "import torch\n"
    "from torch._higher_order_ops.while_loop import while_loop\n\n"
    "class Loop(torch.nn.Module):\n"
    "    def forward(self, x):\n"
    "        return while_loop(lambda i, x: i < 3, lambda i, x: (i + 1, x + 1),\n"
    "                          (torch.tensor(0), x))\n"
)


def test_run_stops_a_model_whose_compiled_code_never_returns_at_its_timeout(
    tmp_path: Path,
) -> None:
    (tmp_path / "loop.py").write_text(WHILE_LOOP)
    report = tmp_path / "out.json"
    argv = ["run", f"{tmp_path}/loop.py::Loop", "--inputs", "7x9xf32", "--timeout", "3"]
    code, out, err = run_cli([*argv, "--no-time", "--json", str(report)])
    assert code == 1
    assert (
        "through pipeline 'refbackend' (jit): TIMEOUT, no result after 3 s (--timeout), while "
        "running the compiled code\n"
    ) in err
    assert [ln.split()[1:3] for ln in out.splitlines()[2:3]] == [["refbackend", "TIMEOUT"]]
    assert [r["verdict"] for r in json.loads(report.read_text())["results"]] == ["TIMEOUT"]
