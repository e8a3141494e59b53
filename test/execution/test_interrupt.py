"""Ctrl-C in `mlirpipe run` and `mlirpipe sweep -j 2`: one line, status 130, no process left."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import psutil
import pytest
from cli_run import MODEL

from pytest_mlirpipe import contain

ROOT = Path(__file__).resolve().parents[2]
MAIN = "import sys; sys.argv[0] = 'mlirpipe'; from pytest_mlirpipe.cli.main import main; main()"


def interrupt(argv: list[str], ready: Callable[[psutil.Process], bool]) -> tuple[int, str, list]:
    """Start `mlirpipe ARGV` in a process group of its own, wait until `ready(process)`, send
    SIGINT to the group as a terminal's Ctrl-C does; (exit status, stderr, the processes it
    had started then)."""
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
    }
    tool = subprocess.Popen(
        [sys.executable, "-c", MAIN, *argv],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env=env,
        process_group=0,
    )
    try:
        process = psutil.Process(tool.pid)
        deadline = time.monotonic() + 240
        while not ready(process):
            assert tool.poll() is None, "the command ended before it could be interrupted"
            assert time.monotonic() < deadline, "the command never got ready"
            time.sleep(0.05)
        started = process.children(recursive=True)
        os.killpg(tool.pid, signal.SIGINT)
        _, err = tool.communicate(timeout=60)
    finally:
        if tool.poll() is None:
            os.killpg(tool.pid, signal.SIGKILL)
            tool.wait()
    return tool.returncode, err.decode(), started


def still_running(processes: list[psutil.Process]) -> list[psutil.Process]:
    _, alive = psutil.wait_procs(processes, timeout=5)
    return [p for p in alive if p.status() != psutil.STATUS_ZOMBIE]


def test_ctrl_c_in_run_ends_it_and_its_contained_child_with_one_line(tmp_path):
    (tmp_path / "m.py").write_text(MODEL)
    argv = [f"{tmp_path}/m.py::MM", "--inputs", "1024x1024xf32,1024x1024xf32"]
    argv += ["--pipeline", "refbackend", "--no-time"]

    def lowering(process: psutil.Process) -> bool:
        return bool(process.children())  # the forked child that lowers, compiles and runs

    status, err, started = interrupt(["run", *argv], lowering)
    assert started, "no contained child was running"
    assert (status, err) == (130, "mlirpipe: interrupted\n")
    assert still_running(started) == []


def test_ctrl_c_in_a_parallel_sweep_keeps_the_finished_units_and_ends_its_workers(tmp_path):
    pytest.importorskip("expecttest", reason="torch's OpInfo catalogue needs expecttest")
    out = tmp_path / "sweep"
    results = out / "results.jsonl"
    ops = "add,mul,sub,div,abs,neg,exp,log,sin,cos,tanh,sigmoid"
    argv = ["sweep", "--ops", ops, "--pipeline", "refbackend", "-j", "2", "--out", str(out)]

    def one_unit_done(process: psutil.Process) -> bool:
        return results.exists() and results.read_text().endswith("\n")

    status, err, started = interrupt(argv, one_unit_done)
    assert (status, err) == (130, "mlirpipe: interrupted\n")
    assert still_running(started) == []
    kept = [json.loads(line) for line in results.read_text().splitlines()]
    assert 0 < len({r["op"] for r in kept}) < 12  # what ended is kept; a rerun resumes the rest


def test_a_contained_child_hit_by_sigint_ends_at_once_without_a_traceback(capfd):
    def work() -> None:
        os.kill(os.getpid(), signal.SIGINT)  # the child's own pid: only it is interrupted
        time.sleep(30)

    ended = contain.run_contained(work, timeout=60)
    assert (ended.kind, ended.detail) == ("crashed", "exited with status 130")
    assert ended.seconds < 20
    assert capfd.readouterr().err == ""
