"""The console scripts as a shell runs them: a closed pipe, and exit statuses."""

from __future__ import annotations

import io
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

ADD = """\
func.func @add(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
  %e = tensor.empty() : tensor<4xf32>
  %r = linalg.add ins(%a, %b : tensor<4xf32>, tensor<4xf32>)
                  outs(%e : tensor<4xf32>) -> tensor<4xf32>
  return %r : tensor<4xf32>
}
"""

# Each console script's entry point (pyproject's [project.scripts]).
SCRIPTS = {
    "mlirpipe": "pytest_mlirpipe.cli.main",
    "mlirpipe-opt": "pytest_mlirpipe.tools.opt",
    "mlirpipe-assert": "pytest_mlirpipe.tools.ir_assert",
}


def script(name: str, *argv: str | Path) -> list[str]:
    """The command line running console script `name` from this checkout."""
    code = f"import sys; sys.argv[0] = {name!r}; from {SCRIPTS[name]} import main; main()"
    return [sys.executable, "-c", code, *map(str, argv)]


def script_env() -> dict[str, str]:
    return {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
    }


@pytest.fixture
def add_file(tmp_path: Path) -> Path:
    path = tmp_path / "add.mlir"
    path.write_text(ADD)
    return path


@pytest.mark.parametrize(
    "argv",
    [
        ["mlirpipe", "list"],
        ["mlirpipe", "passes"],
        ["mlirpipe", "stages", "{add}", "--pipeline", "refbackend"],
        ["mlirpipe-opt", "{add}", "--pipeline", "refbackend"],
    ],
    ids=" ".join,
)
def test_a_reader_that_closed_the_pipe_ends_the_tool_quietly_as_sigpipe_would(argv, add_file):
    command = script(argv[0], *(a.format(add=add_file) for a in argv[1:]))
    tool = subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=script_env()
    )
    tool.stdout.close()  # as `| head -0` would: every write to stdout breaks the pipe
    with tool.stderr:
        stderr = tool.stderr.read().decode()
    assert (tool.wait(), stderr) == (141, "")


@pytest.mark.parametrize("unbuffered", ["", "1"], ids=["buffered", "PYTHONUNBUFFERED"])
def test_a_reader_that_leaves_in_the_middle_of_a_large_output_ends_the_tool_with_141(
    unbuffered, tmp_path
):
    big = tmp_path / "big.mlir"  # far more than a pipe holds: the write is cut short
    big.write_text("".join(ADD.replace("@add", f"@add{i}") for i in range(1000)))
    command = script("mlirpipe-opt", big, "--pass-pipeline", "builtin.module(canonicalize)")
    env = {**script_env(), "PYTHONUNBUFFERED": unbuffered}
    tool = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)

    assert tool.stdout.readline() == b"module {\n"
    tool.stdout.close()  # as `| head -1` does once it has its line
    with tool.stderr:
        stderr = tool.stderr.read().decode()

    assert (tool.wait(), stderr) == (141, "")


def test_a_pipe_closed_after_the_first_line_ends_the_tool_quietly_in_a_shell():
    shell = f"set -o pipefail; {' '.join(map(repr, script('mlirpipe', 'passes')))} | head -1"
    done = subprocess.run(["bash", "-c", shell], capture_output=True, text=True, env=script_env())
    assert done.stderr == ""
    assert done.returncode in (0, 141)  # 0: every line was written before head left
    assert done.stdout.count("\n") == 1


# --- exit status 2: the command line or its inputs are wrong, and nothing ran ----------------

LONG = "x" * 300

# (tool, argv, the first line of stderr); in a folder holding add.mlir and nothing else.
USAGE_ERRORS = [
    ("mlirpipe", [], "mlirpipe: error: the following arguments are required: COMMAND"),
    ("mlirpipe", ["list", "--bogus"], "mlirpipe list: error: unrecognized arguments: --bogus"),
    (
        "mlirpipe",
        ["list", "--pipelines-dir", "absent"],
        "mlirpipe list: error: --pipelines-dir absent: no such folder",
    ),
    (
        "mlirpipe",
        ["stages", "absent.mlir", "--pipeline", "refbackend"],
        "mlirpipe stages: absent.mlir: error: cannot read input file: No such file or directory",
    ),
    (
        "mlirpipe",
        ["stages", "add.mlir", "--pipeline", "nope"],
        "mlirpipe stages: error: --pipeline: unknown pipeline 'nope'",
    ),
    (
        "mlirpipe",
        ["stages", "add.mlir", "--pipeline", "refbackend", "--stop-after", "nope"],
        "mlirpipe stages: error: --stop-after: pipeline 'refbackend' has no stage 'nope'",
    ),
    ("mlirpipe", ["passes", "--bogus"], "mlirpipe passes: error: unrecognized arguments: --bogus"),
    (
        "mlirpipe",
        ["import", "absent.py::M", "--inputs", "2xf32", "--to", "torch"],
        "mlirpipe import: absent.py: error: no model file at this path",
    ),
    (
        "mlirpipe",
        ["import", "absent.py::M", "--inputs", "2xf32", "--to", "nope"],
        "mlirpipe import: error: argument --to: invalid choice: 'nope' "
        "(choose from 'torch', 'linalg', 'tosa', 'onnx')",
    ),
    (
        "mlirpipe",
        ["run", "absent.py::M", "--inputs", "2xf32"],
        "mlirpipe run: absent.py: error: no model file at this path",
    ),
    (
        "mlirpipe",
        ["run", "absent.py::M", "--inputs", "2xf32", "--threads", "0"],
        "mlirpipe run: error: --threads and --blocks must be at least 1 (got 0, 5)",
    ),
    (
        "mlirpipe",
        ["run", "absent.py::M", "--inputs", "2xf32", "--rtol", "-1"],
        "mlirpipe run: error: a tolerance must be a finite number >= 0 (got --rtol -1)",
    ),
    (
        "mlirpipe",
        ["reduce", "add.mlir"],
        "mlirpipe reduce: error: one of the arguments --pipeline --pass-pipeline --run-line "
        "is required",
    ),
    (
        "mlirpipe",
        ["reduce", "add.mlir", "--pipeline", "refbackend", "--budget", "0"],
        "mlirpipe reduce: error: --budget must be a number of seconds > 0 (got 0)",
    ),
    (
        "mlirpipe",
        ["reduce", "add.mlir", "--pass-pipeline", "canonicalize", "--stop-after", "bufferize"],
        "mlirpipe reduce: error: --stop-after and --start-after need --pipeline",
    ),
    (
        "mlirpipe",
        ["reduce", "add.mlir", "--pipeline", "refbackend", "-o", "nodir/small.mlir"],
        "mlirpipe reduce: error: -o nodir/small.mlir: there is no folder nodir",
    ),
    (
        "mlirpipe",
        ["reduce", "add.mlir", "--run-line", "1"],
        "mlirpipe reduce: add.mlir: error: no RUN line at line 1 ran (RUN lines that ran: none)",
    ),
    (
        "mlirpipe",
        ["run", "absent.py::M", "--inputs", "2xf32", "--timeout", "soon"],
        "mlirpipe run: error: --timeout takes a number of seconds >= 0 (0: none), got 'soon'",
    ),
    (
        "mlirpipe",
        ["run", "absent.py::M", "--inputs", "2xf32", "--flops", "-5"],
        "mlirpipe run: error: --flops takes the floating-point operations of one call, "
        "a number > 0, got -5",
    ),
    (
        "mlirpipe",
        ["run", "absent.py::M", "--inputs", "2xf32", "--flops", "inf"],
        "mlirpipe run: error: --flops takes the floating-point operations of one call, "
        "a number > 0, got inf",
    ),
    (
        "mlirpipe",
        ["run", "absent.py::M", "--inputs", "2xf32", "--json", "."],
        "mlirpipe run: .: error: --json: cannot write the report: it is a folder",
    ),
    (
        "mlirpipe",
        ["run", "absent.py::M", "--inputs", "2xf32", "--json", "add.mlir/run.json"],
        "mlirpipe run: add.mlir/run.json: error: --json: cannot write the report: "
        "{cwd}/add.mlir is not a folder",
    ),
    (
        "mlirpipe",
        ["run", "absent.py::M", "--inputs", "2xf32", "--json", "absent/run.json"],
        "mlirpipe run: absent/run.json: error: --json: cannot write the report: "
        "no folder {cwd}/absent",
    ),
    (
        "mlirpipe",
        ["sweep", "--ops", "add", "-j", "0", "--out", "out"],
        "mlirpipe sweep: error: --jobs must be at least 1 (got 0)",
    ),
    (
        "mlirpipe",
        ["sweep", "--ops", "", "--out", "out"],
        "mlirpipe sweep: error: --ops names nothing (got '')",
    ),
    (
        "mlirpipe",
        ["sweep", "--ops", "add", "--dtypes", ",", "--out", "out"],
        "mlirpipe sweep: error: --dtypes names nothing (got ',')",
    ),
    (
        "mlirpipe",
        ["run", "absent.py::M", "--inputs", "2xf32", "--pipeline", ""],
        "mlirpipe run: error: --pipeline names nothing (got '')",
    ),
    (
        "mlirpipe",
        ["showcase", "absent"],
        "mlirpipe showcase: error: no such file or directory: absent",
    ),
    (
        "mlirpipe",
        ["showcase", "add.mlir"],
        "mlirpipe showcase: add.mlir: error: no RUN line names a known pipeline (--pipeline NAME)",
    ),
    (
        "mlirpipe",
        ["showcase", "."],
        "mlirpipe showcase: error: no stage tests under .: no .mlir file has a RUN line naming a "
        "known pipeline (--pipeline NAME)",
    ),
    (
        "mlirpipe",
        ["update-checks", "absent"],
        "mlirpipe update-checks: error: no such file or folder: absent",
    ),
    (
        "mlirpipe",
        ["merge"],
        "mlirpipe merge: error: the following arguments are required: OUT, REPORT",
    ),
    (
        "mlirpipe",
        ["merge", "m.xml", "."],
        "mlirpipe merge: error: . is a folder, not a report",
    ),
    # a name longer than the system takes: said of the name, whichever check meets it first
    ("mlirpipe", ["showcase", LONG], f"mlirpipe showcase: {LONG}: error: File name too long"),
    (
        "mlirpipe",
        ["update-checks", LONG],
        f"mlirpipe update-checks: {LONG}: error: File name too long",
    ),
    (
        "mlirpipe",
        ["run", f"{LONG}.py::M", "--inputs", "2xf32"],
        f"mlirpipe run: {LONG}.py: error: File name too long",
    ),
    (
        "mlirpipe",
        ["sweep", "--ops", "add", "--out", LONG],
        f"mlirpipe sweep: {LONG}: error: File name too long",
    ),
    (
        "mlirpipe",
        ["stages", "add.mlir", "--pipeline", "refbackend", "--html", LONG],
        f"mlirpipe stages: {LONG}: error: --html: cannot write the report: File name too long "
        "(in {cwd})",
    ),
    (
        "mlirpipe-opt",
        ["add.mlir"],
        "mlirpipe-opt: error: one of the arguments --pipeline --pass-pipeline is required",
    ),
    (
        "mlirpipe-opt",
        ["absent.mlir", "--pipeline", "refbackend"],
        "mlirpipe-opt: absent.mlir: error: cannot read input file: No such file or directory",
    ),
    (
        "mlirpipe-opt",
        ["add.mlir", "--pipeline", "nope"],
        "mlirpipe-opt: error: --pipeline: unknown pipeline 'nope'",
    ),
    (
        "mlirpipe-opt",
        ["add.mlir", "--pipeline", "refbackend", "--print-after", "nope"],
        "mlirpipe-opt: error: --print-after: pipeline 'refbackend' has no stage 'nope'",
    ),
    (
        "mlirpipe-opt",
        ["add.mlir", "--pipeline", "refbackend", "--start-after", "convert-to-llvm"],
        "mlirpipe-opt: error: no stage to run: --start-after convert-to-llvm is the last stage",
    ),
    (
        "mlirpipe-opt",
        ["add.mlir", "--pass-pipeline", "builtin.module(canonicalize)", "--stop-after", "s"],
        "mlirpipe-opt: error: --stop-after, --start-after and --print-after need --pipeline, "
        "not --pass-pipeline",
    ),
    (
        "mlirpipe-opt",
        ["add.mlir", "--pass-pipeline", "builtin.module(canonicalise)"],
        "mlirpipe-opt: error: --pass-pipeline: unknown pass 'canonicalise' "
        "(at column 16 of the pass pipeline)",
    ),
    (
        "mlirpipe-opt",
        ["add.mlir", "--pass-pipeline", "builtin.module(cse"],
        "mlirpipe-opt: error: --pass-pipeline: malformed pass pipeline: '(' after "
        "'builtin.module' is never closed (at column 15 of 'builtin.module(cse')",
    ),
    (
        "mlirpipe-opt",
        ["add.mlir", "--pass-pipeline", "cse"],
        "mlirpipe-opt: error: --pass-pipeline: expected pass pipeline to be wrapped with the "
        "anchor operation type, e.g. 'builtin.module(...)'",
    ),
    (
        "mlirpipe-opt",
        ["add.mlir", "--pass-pipeline", "builtin.module(canonicalize{bogus=1})"],
        "mlirpipe-opt: error: --pass-pipeline: MLIR cannot build it: <Pass-Options-Parser>: "
        "no such option bogus; failed to add `canonicalize` with options `bogus=1`",
    ),
    (
        "mlirpipe-opt",
        ["add.mlir", "--split-input-file", "--pass-pipeline", "builtin.module(cse{bogus=1})"],
        "mlirpipe-opt: error: --pass-pipeline: MLIR cannot build it: <Pass-Options-Parser>: "
        "no such option bogus; failed to add `cse` with options `bogus=1`",
    ),
    (
        "mlirpipe-opt",
        ["add.mlir", "--pass-pipeline", "builtin.module(mlirpipe-forbid-ops{bogus=1})"],
        "mlirpipe-opt: error: pass 'mlirpipe-forbid-ops' has no option 'bogus'",
    ),
    (
        "mlirpipe-opt",
        ["add.mlir", "--pipeline", "refbackend", "--assert", "bogus"],
        "mlirpipe-opt: error: unknown assertion 'bogus'",
    ),
    (
        "mlirpipe-assert",
        [],
        "mlirpipe-assert: error: the following arguments are required: ASSERTION",
    ),
    (
        "mlirpipe-assert",
        ["bogus", "-i", "add.mlir"],
        "mlirpipe-assert: error: unknown assertion 'bogus'",
    ),
    (
        "mlirpipe-assert",
        ["no-dialect lnalg", "-i", "add.mlir"],
        "mlirpipe-assert: error: assertion 'no-dialect lnalg': no dialect 'lnalg' is registered",
    ),
    (
        "mlirpipe-assert",
        ["no-op linalg.add", "-i", "absent.mlir"],
        "mlirpipe-assert: absent.mlir: error: cannot read input file: No such file or directory",
    ),
]


def in_process(name: str, argv: list[str]) -> tuple[int, str, str]:
    """(exit status, stdout, stderr) of console script `name`, run in this process."""
    import importlib

    run = importlib.import_module(SCRIPTS[name]).run
    out, err = io.StringIO(), io.StringIO()
    return run(argv, io.StringIO(), out, err), out.getvalue(), err.getvalue()


@pytest.mark.parametrize(
    ("tool", "argv", "message"),
    USAGE_ERRORS,
    ids=[" ".join([tool, *argv]) for tool, argv, _ in USAGE_ERRORS],
)
def test_every_usage_error_exits_2_with_its_message_before_anything_runs(
    tool, argv, message, add_file, monkeypatch
):
    monkeypatch.chdir(add_file.parent)
    status, out, err = in_process(tool, argv)
    message = message.replace("{cwd}", str(add_file.parent))
    assert (status, out, err.splitlines()[0]) == (2, "", message)
    assert sorted(p.name for p in add_file.parent.iterdir()) == ["add.mlir"]  # nothing written


@pytest.mark.parametrize(
    ("tool", "argv"),
    [
        ("mlirpipe", ["list"]),
        ("mlirpipe", ["stages", "add.mlir", "--pipeline", "refbackend"]),
        ("mlirpipe", ["run", "absent.py::M", "--inputs", "2xf32"]),
        ("mlirpipe", ["showcase", "add.mlir"]),
        ("mlirpipe-opt", ["add.mlir", "--pipeline", "refbackend"]),
    ],
    ids=lambda v: " ".join(v) if isinstance(v, list) else v,
)
def test_a_pipelines_path_folder_that_is_not_there_is_a_usage_error(
    tool, argv, add_file, monkeypatch
):
    monkeypatch.chdir(add_file.parent)
    monkeypatch.setenv("MLIRPIPE_PIPELINES_PATH", "absent")
    status, out, err = in_process(tool, argv)
    prog = " ".join([tool, *argv[:1]]) if tool == "mlirpipe" else tool
    assert (status, out, err) == (
        2,
        "",
        f"{prog}: error: $MLIRPIPE_PIPELINES_PATH names absent: no such folder\n"
        f"  hint: give folders of pipeline files (*.toml), separated by '{os.pathsep}', "
        "or unset it\n",
    )


def test_a_merged_report_that_cannot_be_written_is_a_usage_error(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    Path("a.xml").write_text('<testsuite name="a"><testcase classname="c" name="t"/></testsuite>')
    Path("notes").write_text("")
    long_name = "t" * 300 + ".xml"
    for out, why in [
        ("notes/m.xml", f"{tmp_path / 'notes'} is a file, not a folder"),
        (long_name, "File name too long"),
    ]:
        status, stdout, err = in_process("mlirpipe", ["merge", out, "a.xml"])
        assert (status, stdout, err) == (
            2,
            "",
            f"mlirpipe merge: error: cannot write {out}: {why}\n",
        )
    assert sorted(os.listdir()) == ["a.xml", "notes"]


def test_update_checks_refuses_a_file_that_is_not_text_before_it_runs_any(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    Path("b.mlir").write_bytes(b"ML\xefR\x00 CHECK: x\n")  # MLIR bytecode, say
    status, out, err = in_process("mlirpipe", ["update-checks", "b.mlir"])
    assert (status, out, err) == (
        2,
        "",
        "mlirpipe update-checks: b.mlir:1:3: error: input is not UTF-8 text (byte 0xef)\n"
        "  hint: MLIR files are UTF-8 text; a bytecode file must be converted first\n",
    )


@pytest.mark.parametrize(
    ("tool", "argv"),
    [
        ("mlirpipe-opt", ["-", "--pipeline", "refbackend"]),
        ("mlirpipe", ["stages", "-", "--pipeline", "refbackend"]),
        ("mlirpipe-assert", ["no-op linalg.add"]),
    ],
    ids=lambda v: " ".join(v) if isinstance(v, list) else v,
)
def test_standard_input_that_is_not_text_is_located_as_a_file_would_be(tool, argv):
    import importlib

    run = importlib.import_module(SCRIPTS[tool]).run
    stdin = io.TextIOWrapper(io.BytesIO(b"func\n  ML\xefR"), encoding="utf-8")
    out, err = io.StringIO(), io.StringIO()
    prog = " ".join([tool, *argv[:1]]) if tool == "mlirpipe" else tool
    assert (run(argv, stdin, out, err), out.getvalue(), err.getvalue()) == (
        2,
        "",
        f"{prog}: <stdin>:2:5: error: input is not UTF-8 text (byte 0xef)\n"
        "  hint: MLIR files are UTF-8 text; a bytecode file must be converted first\n",
    )


TWO_INPUTS = """\
import torch


class M(torch.nn.Module):
    def forward(self, a, b, scale=1.0):
        return (a + b) * scale
"""


@pytest.mark.parametrize(
    ("command", "inputs", "message"),
    [
        ("import", "4xf32", "--inputs gives 1 input, but forward() of the model takes at least 2"),
        (
            "run",
            "4xf32,4xf32,4xf32,4xf32",
            "--inputs gives 4 inputs, but forward() of the model takes at most 3",
        ),
    ],
)
def test_inputs_that_forward_cannot_take_are_a_usage_error_before_tracing(
    command, inputs, message, tmp_path, monkeypatch
):
    monkeypatch.chdir(tmp_path)
    Path("m.py").write_text(TWO_INPUTS)
    extra = ["--to", "linalg"] if command == "import" else []
    status, out, err = in_process("mlirpipe", [command, "m.py::M", "--inputs", inputs, *extra])
    assert (status, out, err) == (
        2,
        "",
        f"mlirpipe {command}: m.py::M: error: {message} (a, b, scale)\n"
        "  hint: give one item per argument of forward, e.g. --inputs 64x64xf32,64x64xf32\n",
    )


def test_work_that_fails_exits_1_not_2(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "bad.mlir").write_text("garbage {\n")
    for tool, argv in [
        ("mlirpipe-opt", ["bad.mlir", "--pipeline", "refbackend"]),
        ("mlirpipe-assert", ["no-op linalg.add", "-i", "bad.mlir"]),
    ]:
        status, _, err = in_process(tool, argv)
        assert (status, err.splitlines()[0]) == (
            1,
            "bad.mlir:1:1: error: cannot parse MLIR: custom op 'garbage' is unknown "
            "(tried 'builtin.garbage' as well)",
        )
    (tmp_path / "add.mlir").write_text(ADD)
    status, _, err = in_process("mlirpipe-assert", ["no-op linalg.add", "-i", "add.mlir"])
    assert status == 1 and "no-op linalg.add" in err


def test_lit_whose_reader_closed_the_pipe_ends_quietly_instead_of_waiting_forever(tmp_path):
    """`lit -v test/ | head`: the reader leaves while lit reports a failure. Without the
    handling in `configure`, lit's result thread died of BrokenPipeError and lit hung."""
    suite = tmp_path / "suite"
    suite.mkdir()
    (suite / "lit.cfg.py").write_text(
        "from pytest_mlirpipe import configure\n"
        f"configure(config, source_root={str(suite)!r}, exec_root={str(tmp_path / 'out')!r})\n"
    )
    for i in range(3):  # failures, so that -v has a report to write
        (suite / f"f{i}.mlir").write_text("// RUN: false\n" + "// padding\n" * 2000)
    code = "import sys; sys.argv[0] = 'lit'; from lit.main import main; main()"
    lit = subprocess.Popen(
        [sys.executable, "-c", code, "-v", "-j1", str(suite)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=script_env(),
    )
    try:
        lit.stdout.close()  # as `| head -0` would
        with lit.stderr:
            stderr = lit.stderr.read().decode()
        status = lit.wait(timeout=120)
    finally:
        lit.kill()
        lit.wait()
    assert "Traceback" not in stderr and "BrokenPipeError" not in stderr
    assert status == -signal.SIGPIPE


@pytest.mark.parametrize("name", ["mlirpipe-opt", "mlirpipe-assert"])
def test_ctrl_c_ends_a_tool_with_one_line_that_names_it(name):
    """Inside a RUN line's pipeline, the line says which command was interrupted."""
    argv = ["-", "--pipeline", "refbackend"] if name == "mlirpipe-opt" else ["no-dialect linalg"]
    tool = subprocess.Popen(
        script(name, *argv),
        stdin=subprocess.PIPE,  # never written: the tool waits reading its input
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env=script_env(),
    )
    try:
        wchan = Path(f"/proc/{tool.pid}/wchan")
        start = time.monotonic()
        while "pipe" not in wchan.read_text():  # started, and blocked reading stdin
            assert tool.poll() is None and time.monotonic() < start + 120
            if wchan.read_text() in ("", "0") and time.monotonic() > start + 20:
                break  # a kernel that does not say where a process waits: surely started
            time.sleep(0.05)
        tool.send_signal(signal.SIGINT)
        _, err = tool.communicate(timeout=60)
    finally:
        if tool.poll() is None:
            tool.kill()
            tool.wait()
    assert (tool.returncode, err.decode()) == (130, f"{name}: interrupted\n")
