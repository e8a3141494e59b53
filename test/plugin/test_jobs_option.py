"""--mlirpipe-jobs N: the RUN/CHECK files run by N processes forked after one collection, with
the reports, warnings, -x, a worker's death and Ctrl-C as a serial run has them."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import xml.etree.ElementTree as ET

import pytest

SLEEPER = "// RUN: touch %t.started && sleep 60\n"
PASSES = "// RUN: true\n"
FAILS = "// RUN: false\n"
XFAILS = "// XFAIL: *\n// RUN: false\n"
UNSUPPORTED = "// REQUIRES: no-such-feature\n// RUN: false\n"
# A CHECK line FileCheck never reads (the RUN line checks the prefix FOO only).
LINTED = "// RUN: echo foo | FileCheck --check-prefix=FOO %s\n// FOO: foo\n// CHECK: bar\n"


def _files(pytester: pytest.Pytester, ini: str = "", **files: str) -> None:
    pytester.makeini(f"[pytest]\nmlirpipe_order = lexical\n{ini}")
    for name, text in files.items():
        pytester.path.joinpath(f"{name}.mlir").write_text(text)


def test_jobs_give_each_file_its_verdict_and_junit_entry(pytester: pytest.Pytester) -> None:
    _files(
        pytester,
        a_passes=PASSES,
        b_fails=FAILS,
        c_xfails=XFAILS,
        d_unsupported=UNSUPPORTED,
        e_passes=PASSES,
    )
    result = pytester.runpytest_subprocess("--mlirpipe-jobs=2", "--junitxml=out.xml")
    result.assert_outcomes(passed=2, failed=1, xfailed=1, skipped=1)
    result.stdout.fnmatch_lines(["FAILED b_fails.mlir::b_fails.mlir*"])
    verdicts = {
        case.get("name"): prop.get("value")
        for case in ET.parse(pytester.path / "out.xml").iter("testcase")
        for prop in case.iter("property")
        if prop.get("name") == "mlirpipe_verdict"
    }
    assert verdicts == {
        "a_passes.mlir": "PASS",
        "b_fails.mlir": "FAIL",
        "c_xfails.mlir": "XFAIL",
        "d_unsupported.mlir": "UNSUPPORTED",
        "e_passes.mlir": "PASS",
    }


def test_jobs_show_the_workers_lint_warnings(pytester: pytest.Pytester) -> None:
    _files(pytester, linted=LINTED, passes=PASSES)
    result = pytester.runpytest_subprocess("--mlirpipe-jobs=2")
    result.assert_outcomes(passed=2, warnings=1)
    result.stdout.fnmatch_lines(["*MlirpipeLintWarning*CHECK*"])


def test_python_tests_run_in_this_process_after_the_files(pytester: pytest.Pytester) -> None:
    _files(pytester, a=PASSES, b=PASSES)
    pytester.makeconftest(
        "import os\ndef pytest_configure(config):\n    os.environ['MAIN_PID'] = str(os.getpid())\n"
    )
    pytester.makepyfile(
        test_here="import os\n\ndef test_here():\n"
        "    assert os.getpid() == int(os.environ['MAIN_PID'])\n"
    )
    result = pytester.runpytest_subprocess("--mlirpipe-jobs=2", "-v")
    result.assert_outcomes(passed=3)
    result.stdout.fnmatch_lines(["*a.mlir*PASSED*", "*b.mlir*PASSED*", "*test_here PASSED*"])


def test_x_stops_the_run_at_the_first_failing_file(pytester: pytest.Pytester) -> None:
    _files(pytester, a_fails=FAILS, **{f"b{i}": "// RUN: sleep 0.3\n" for i in range(8)})
    result = pytester.runpytest_subprocess("--mlirpipe-jobs=2", "-x")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    outcomes = result.parseoutcomes()
    assert outcomes["failed"] == 1
    assert outcomes.get("passed", 0) < 8, result.stdout.str()
    result.stdout.fnmatch_lines(["*stopping after 1 failures*"])


def test_maxfail_leaves_the_files_workers_hold_unstarted(pytester: pytest.Pytester) -> None:
    _files(
        pytester,
        **{f"a{i}": "// RUN: sleep 0.5 && false\n" for i in range(4)},
        **{f"b{i}": PASSES for i in range(6)},
    )
    result = pytester.runpytest_subprocess("--mlirpipe-jobs=2", "--maxfail=1")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    outcomes = result.parseoutcomes()
    # the two files running when the first failed, no more
    assert outcomes["failed"] <= 2, result.stdout.str()
    assert outcomes.get("passed", 0) == 0, result.stdout.str()


def test_pytest_exit_in_a_file_ends_the_run_as_it_does_here(pytester: pytest.Pytester) -> None:
    _files(pytester, **{f"f{i}": PASSES for i in range(6)})
    pytester.makeconftest(
        "import pytest\n"
        "def pytest_runtest_setup(item):\n"
        "    if item.name == 'f2.mlir':\n"
        "        pytest.exit('the tool is missing', returncode=3)\n"
    )
    result = pytester.runpytest_subprocess("--mlirpipe-jobs=2")
    assert result.ret == 3
    result.stdout.fnmatch_lines(["*Exit: the tool is missing*"])
    assert "Traceback" not in result.stdout.str() + result.stderr.str()


def test_each_file_s_captured_output_is_its_own(pytester: pytest.Pytester) -> None:
    _files(pytester, **{f"f{i:02d}": "// RUN: sleep 0.05\n" for i in range(12)})
    pytester.makeconftest(
        "import os\n"
        "def pytest_runtest_setup(item):\n"
        "    for i in range(200):\n"
        "        print(f'{item.name} {i}')\n"
        "        os.write(1, f'{item.name} fd {i}\\n'.encode())\n"
    )
    result = pytester.runpytest_subprocess(
        "--mlirpipe-jobs=2", "--junitxml=out.xml", "-o", "junit_logging=system-out"
    )
    result.assert_outcomes(passed=12)
    for case in ET.parse(pytester.path / "out.xml").iter("testcase"):
        out = case.findtext("system-out") or ""
        lines = [line for line in out.splitlines() if line.startswith("f")]
        assert len(lines) == 400, (case.get("name"), len(lines))
        assert all(line.startswith(f"{case.get('name')} ") for line in lines), case.get("name")


def test_a_worker_that_dies_fails_its_file_and_the_run_goes_on(
    pytester: pytest.Pytester,
) -> None:
    _files(pytester, a=PASSES, dies=PASSES, z=PASSES, zz=PASSES)
    pytester.makeconftest(
        "import os, signal\n"
        "def pytest_runtest_call(item):\n"
        "    if item.name == 'dies.mlir':\n"
        "        os.kill(os.getpid(), signal.SIGKILL)\n"
    )
    result = pytester.runpytest_subprocess("--mlirpipe-jobs=2")
    result.assert_outcomes(passed=3, failed=1)
    result.stdout.fnmatch_lines(
        [
            "*mlirpipe: the --mlirpipe-jobs process running dies.mlir::dies.mlir was killed "
            "by SIGKILL (a kill)",
            "*hint: run the file alone, without --mlirpipe-jobs, to see where",
        ]
    )


# A conftest whose thread is alive when the files would be forked.
THREAD = (
    "import threading\n"
    "STOP = threading.Event()\n"
    "def pytest_configure(config):\n"
    "    threading.Thread(target=STOP.wait, daemon=True).start()\n"
    "def pytest_unconfigure(config):\n"
    "    STOP.set()\n"
)


@pytest.mark.parametrize(
    ("flags", "conftest", "why", "files", "outcomes"),
    [
        (
            (),
            THREAD,
            "this process runs 2 Python threads (a fork copies one)",
            {"a": PASSES, "b": FAILS},
            {"passed": 1, "failed": 1},
        ),
        (
            ("--sw",),
            "",
            "--sw needs the files in their order",
            {"a": FAILS, "b": PASSES},
            {"failed": 1},
        ),
        # files that pass: a failure would start the debugger
        (
            ("--pdb",),
            "",
            "--pdb needs this terminal",
            {"a": PASSES, "b": PASSES},
            {"passed": 2},
        ),
    ],
    ids=["threads", "sw", "pdb"],
)
def test_what_cannot_fork_or_needs_order_keeps_the_files_in_this_process(
    pytester: pytest.Pytester, flags, conftest, why, files, outcomes
) -> None:
    _files(pytester, **files)
    if conftest:
        pytester.makeconftest(conftest)
    result = pytester.runpytest_subprocess("--mlirpipe-jobs=2", *flags)
    result.assert_outcomes(**outcomes)
    result.stdout.fnmatch_lines(
        [f"mlirpipe: --mlirpipe-jobs=2: {why}; the files run here, one at a time"]
    )


@pytest.mark.parametrize(("value", "shown"), [("0", "'0'"), ("two", "'two'"), ("-1", "'-1'")])
def test_a_bad_number_of_jobs_is_refused(pytester: pytest.Pytester, value, shown) -> None:
    _files(pytester, a=PASSES)
    result = pytester.runpytest_subprocess(f"--mlirpipe-jobs={value}")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        [
            f"*mlirpipe: the number of jobs must be a whole number >= 1 or auto, got {shown} "
            "(--mlirpipe-jobs / mlirpipe_jobs)"
        ]
    )


def test_jobs_auto_and_the_ini_key(pytester: pytest.Pytester) -> None:
    _files(pytester, "mlirpipe_jobs = auto\n", a=PASSES, b=FAILS)
    result = pytester.runpytest_subprocess()
    result.assert_outcomes(passed=1, failed=1)


def test_jobs_with_xdist_s_n_is_a_usage_error_but_the_ini_key_gives_way(
    pytester: pytest.Pytester,
) -> None:
    _files(pytester, "mlirpipe_jobs = 2\n", a=PASSES, b=FAILS)
    result = pytester.runpytest_subprocess("--mlirpipe-jobs=2", "-n", "2")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        [
            "*mlirpipe: --mlirpipe-jobs and -n both split the run between processes: use one",
            "*hint: --mlirpipe-jobs forks its processes once this one has collected the files; "
            "-n starts interpreters that each collect them",
        ]
    )
    result = pytester.runpytest_subprocess("-n", "2")
    result.assert_outcomes(passed=1, failed=1)


def _two_sleeping(pytester: pytest.Pytester) -> subprocess.Popen:
    """pytest --mlirpipe-jobs=2 on three files that sleep, once two have started."""
    _files(pytester, a=SLEEPER, b=SLEEPER, c=SLEEPER)
    output_dir = pytester.path / "build"  # build/pytest/WORKER: the outer run may be xdist's
    run = subprocess.Popen(
        [sys.executable, "-m", "pytest", "--mlirpipe-jobs=2", "-p", "no:cacheprovider"],
        cwd=pytester.path,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,  # a terminal's foreground group: pytest and what it starts
    )
    deadline = time.monotonic() + 30
    while len(list(output_dir.rglob("*.started"))) < 2 and time.monotonic() < deadline:
        time.sleep(0.05)
    assert len(list(output_dir.rglob("*.started"))) == 2, run.communicate(timeout=60)[0]
    return run


def _ended_cleanly(run: subprocess.Popen) -> None:
    output, _ = run.communicate(timeout=30)
    assert run.returncode == pytest.ExitCode.INTERRUPTED, output
    assert "KeyboardInterrupt" in output, output
    assert "Traceback" not in output, output
    # A process a worker started may still be a zombie for a moment, until init reaps it.
    _nothing_left(run.pid)


def test_ctrl_c_ends_the_run_and_every_worker(pytester: pytest.Pytester) -> None:
    run = _two_sleeping(pytester)
    os.killpg(run.pid, signal.SIGINT)
    _ended_cleanly(run)


def test_a_sigint_to_pytest_alone_ends_its_workers_too(pytester: pytest.Pytester) -> None:
    run = _two_sleeping(pytester)
    os.kill(run.pid, signal.SIGINT)
    _ended_cleanly(run)


def test_a_sigterm_to_pytest_alone_ends_its_workers_too(pytester: pytest.Pytester) -> None:
    """As `timeout` or a CI runner's cancel does: pytest ends at once, and its workers (each
    in a process group of its own) with it."""
    run = _two_sleeping(pytester)
    os.kill(run.pid, signal.SIGTERM)
    run.communicate(timeout=30)
    assert run.returncode == -signal.SIGTERM
    _nothing_left(run.pid)


def _nothing_left(session: int) -> None:
    deadline = time.monotonic() + 10
    while True:
        left = subprocess.run(
            ["ps", "-o", "pid=,pgid=,stat=,args=", "-s", str(session)],
            capture_output=True,
            text=True,
        ).stdout
        if not left or time.monotonic() > deadline:
            break
        time.sleep(0.1)
    assert left == "", left
