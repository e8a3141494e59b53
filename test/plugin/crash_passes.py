"""Python passes that abort, segfault, exit or hang; tests load them through
$MLIRPIPE_PASS_MODULES (in-process and in every subprocess a RUN line starts)."""

import ctypes
import os
import sys
import time

from pytest_mlirpipe.lowering import passes


def _pass(action):
    def factory(options):
        def run(op, pass_):
            action()

        return run

    return factory


passes.register("crash-abort", "aborts")(_pass(os.abort))
passes.register("crash-segv", "dereferences NULL")(_pass(lambda: ctypes.string_at(0)))
passes.register("crash-exit", "exits with status 3")(_pass(lambda: os._exit(3)))
passes.register("crash-hang", "never returns")(_pass(lambda: time.sleep(600)))


def _abort_in_a_test_process() -> None:
    # Aborts where state of earlier work can linger (a test process), not in a fresh
    # `mlirpipe-opt` process: a crash that a run with every tool a subprocess does not repeat.
    if not sys.argv[0].endswith(os.path.join("tools", "opt.py")):
        os.abort()


passes.register("crash-in-process", "aborts inside a test process only")(
    _pass(_abort_in_a_test_process)
)
