"""A contained check forks a child that only compiles, runs and compares: what every model
needs alike (imports, digests) is done once, before the fork, in the test process."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import weakref

import psutil

from pytest_mlirpipe import contain, mlir_env

# Run in a fresh interpreter: the test process may have imported the modules already.
SCRIPT = textwrap.dedent(
    """
    import importlib.metadata, json, sys
    import numpy as np
    from pytest_mlirpipe import mlir_env
    from pytest_mlirpipe.execution import cache, check
    from pytest_mlirpipe.execution.check import ModelChecker

    GOOD = '''
    func.func @forward(%arg0: tensor<4xf32>) -> tensor<4xf32> {
      %e = tensor.empty() : tensor<4xf32>
      %0 = linalg.add ins(%arg0, %arg0 : tensor<4xf32>, tensor<4xf32>)
                      outs(%e : tensor<4xf32>) -> tensor<4xf32>
      return %0 : tensor<4xf32>
    }
    '''
    reads = []
    version = importlib.metadata.version
    importlib.metadata.version = lambda name: reads.append(name) or version(name)
    made = []  # a context made registers the torch dialect in it
    register = mlir_env.torch_dialect.register_dialect
    mlir_env.torch_dialect.register_dialect = lambda ctx: made.append(1) or register(ctx)
    compile_and_compare = ModelChecker._compile_and_compare

    def watched(self, *args):  # runs in the forked child: its findings go out on stdout
        modules = set(sys.modules)
        digests = cache.project_code_digest.cache_info().misses
        metadata = len(reads)
        contexts = len(made)
        try:
            return compile_and_compare(self, *args)
        finally:
            found = {
                "imported": sorted(set(sys.modules) - modules),
                "digested": cache.project_code_digest.cache_info().misses - digests,
                "package metadata read": reads[metadata:],
                "contexts made": len(made) - contexts,
            }
            print(json.dumps(found), flush=True)

    ModelChecker._compile_and_compare = watched
    checker = ModelChecker(cache_dir=None, isolation="fork")
    x = np.arange(4, dtype=np.float32)
    checker.check(GOOD, x, pipelines=["refbackend"], reference=lambda x: x + x, name="first")
    """
)


def test_a_contained_child_imports_digests_and_makes_nothing_the_test_process_could_have():
    run = subprocess.run(
        [sys.executable, "-c", SCRIPT], capture_output=True, text=True, timeout=300
    )

    assert run.returncode == 0, run.stderr
    (found,) = [json.loads(line) for line in run.stdout.splitlines() if line.startswith("{")]
    assert found == {
        "imported": [],
        "digested": 0,
        "package metadata read": [],
        "contexts made": 0,
    }


def test_a_context_made_ahead_goes_to_a_forked_child_never_to_its_maker():
    mlir_env.make_contexts_ahead(1)  # (a contained check in this process may have made some)
    ahead = [ctx for owner, ctx in mlir_env._AHEAD if owner == os.getpid()]

    def child_context():
        ctx = mlir_env.new_context()
        with ctx:  # as fresh: it parses a module of a dialect it loads on demand
            module = mlir_env.ir.Module.parse("func.func @f() { return }")
        return ctx is ahead[0], str(module).count("func.func")

    assert ahead
    assert mlir_env.new_context() not in ahead
    assert contain.run_contained(child_context).value == (True, 1)
    assert [ctx for owner, ctx in mlir_env._AHEAD if owner == os.getpid()] == ahead


def test_progress_notes_cost_a_contained_child_no_system_call():
    def noting():
        writes = []
        write = os.write
        os.write = lambda fd, data: writes.append(fd) or write(fd, data)
        try:
            for i in range(100):
                contain.note(f"step {i}")
        finally:
            os.write = write
        return len(writes)

    ended = contain.run_contained(noting)

    assert ended.value == 0
    assert ended.notes[-1] == "step 99"


def test_a_crashed_child_leaves_its_last_notes_even_past_the_kept_tail():
    def crashing():
        for i in range(20_000):  # about 200 KB of notes: the ring wraps around
            contain.note(f"note {i:05}")
        os.kill(os.getpid(), signal.SIGSEGV)

    ended = contain.run_contained(crashing)

    assert ended.kind == "crashed"
    assert ended.notes == tuple(f"note {i:05}" for i in range(19_980, 20_000))


def test_a_child_that_sent_its_whole_result_is_reaped_later_not_on_the_results_path():
    first = contain.run_contained(os.getpid)

    # It has sent all it had to send: its exit (the teardown of a large memory takes
    # milliseconds) is waited for at the next fork, not before the result is returned.
    assert first.ok
    assert psutil.pid_exists(first.value)
    second = contain.run_contained(os.getpid)
    assert not psutil.pid_exists(first.value)
    contain.reap()  # as at the end of the session
    assert not psutil.pid_exists(second.value)


def test_what_a_child_keeps_until_it_exits_is_never_freed_there_and_not_kept_here():
    class Watched:
        def __del__(self):
            contain.note("freed")

    def work(keep):
        watched = Watched()
        if keep:
            contain.keep_until_exit(watched)
        del watched
        return "done"

    assert contain.run_contained(lambda: work(keep=False)).notes == ("freed",)
    assert contain.run_contained(lambda: work(keep=True)).notes == ()
    here = Watched()
    ref = weakref.ref(here)
    contain.keep_until_exit(here)  # outside a contained child: a no-op
    del here
    assert ref() is None
