"""bench/suite_speed.py in its quick mode, each shape of suite: lit and pytest (serial and
under xdist) give every file the same verdict. Timings are printed, never asserted."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench" / "suite_speed.py"
LLVM_FILECHECK = Path("/usr/lib/llvm-22/bin/FileCheck")


@pytest.mark.skipif(not LLVM_FILECHECK.exists(), reason="LLVM's FileCheck is not installed")
@pytest.mark.parametrize("shape", ["build", "external", "internal"])
def test_the_quick_bench_gives_lits_verdicts_under_every_runner(shape: str, tmp_path: Path):
    done = subprocess.run(
        [sys.executable, str(BENCH), "--quick", "--shape", shape, "--keep", str(tmp_path / "s")],
        capture_output=True,
        text=True,
        check=False,
    )
    assert "identical verdicts in every run: yes" in done.stdout, done.stdout + done.stderr
    assert done.returncode == 0, done.stdout + done.stderr
    runners = ("lit -j2", "pytest -n 2", "jobs 2", "pytest")
    if shape != "build":
        runners += ("lit -j1", "lit collect", "pytest collect")
    if shape == "external":  # and the floor: the scripts lit wrote, two at a time
        runners += ("commands -P2",)
    for runner in runners:
        assert f"\n{runner} " in done.stdout, done.stdout


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--runners", "lit,fast"], "--runners: unknown fast (of lit, lit1, floor, n2, "),
        (["--runners", "floor"], "--runners: floor runs the scripts of an external shell"),
    ],
)
def test_a_bad_runner_list_is_a_usage_error(args: list[str], message: str):
    done = subprocess.run(
        [sys.executable, str(BENCH), *args], capture_output=True, text=True, check=False
    )
    assert done.returncode == 2
    assert message in done.stderr, done.stderr
    assert "Traceback" not in done.stderr


def test_the_python_tool_shape_gives_lits_verdicts_preloaded_and_repeated(tmp_path: Path):
    runners = "lit,n2,preload,preload1,preload-jobs,repeat"
    shape = ["--quick", "--shape", "python-tool", "--runners", runners]
    done = subprocess.run(
        [sys.executable, str(BENCH), *shape, "--keep", str(tmp_path / "s")],
        capture_output=True,
        text=True,
        check=False,
    )
    assert "identical verdicts in every run: yes" in done.stdout, done.stdout + done.stderr
    assert done.returncode == 0, done.stdout + done.stderr
    ran = ("lit -j2", "pytest -n 2", "preload -n 2", "preload", "preload jobs 2", "repeat -n 2")
    for runner in ran:
        assert f"\n{runner} " in done.stdout, done.stdout
    assert (tmp_path / "s" / "test" / "lit.cfg").is_file()  # a config without `.py`
