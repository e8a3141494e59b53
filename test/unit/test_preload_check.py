"""What check mode says when a preloaded command did not do what its fresh run did
(filetests/preload_check.py)."""

from __future__ import annotations

import signal

from pytest_mlirpipe.filetests.preload_check import compare, differs_report


def test_the_same_runs_have_nothing_to_say() -> None:
    assert compare((b"a\n", b"", 0), (b"a\n", b"", 0)) == ""


def test_a_different_status_is_said_fresh_first_and_a_signal_by_name() -> None:
    said = compare((b"", b"", 3), (b"", b"", -signal.SIGSEGV))
    assert said == "exit status: 3 fresh, killed by SIGSEGV preloaded"


def test_a_different_output_is_a_diff_of_that_stream() -> None:
    said = compare((b"x\nflavor b\n", b"same", 0), (b"x\nflavor a\n", b"same", 0))
    assert said.splitlines() == [
        "--- stdout (fresh)",
        "+++ stdout (preloaded)",
        "@@ -1,2 +1,2 @@",
        " x",
        "-flavor b",
        "+flavor a",
    ]


def test_a_long_diff_is_cut_and_says_how_much_is_left() -> None:
    fresh = "".join(f"{i}\n" for i in range(40)).encode()
    said = compare((fresh, b"", 0), (b"", b"", 0))
    assert said.splitlines()[-1] == "... 23 more lines"


def test_the_report_names_the_first_difference_and_counts_the_others() -> None:
    report = differs_report(["foo-opt a.mlir\nexit status: 0 fresh, 1 preloaded", "second"])
    assert report == (
        "a preloaded command did not do what its fresh run did (and 1 more) "
        "(--mlirpipe-preload=check): foo-opt a.mlir\nexit status: 0 fresh, 1 preloaded"
    )
