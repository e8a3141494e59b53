"""The lit test format of .mlir suites: lit's ShTest over the files pytest would collect."""

from __future__ import annotations

import re
from pathlib import Path

import lit.formats

_DIRECTIVE = re.compile(rb"\b(RUN|CHECK[\w-]*)\s*:")


def is_test_file(path: Path) -> bool:
    """A file with RUN: or CHECK directives; plain MLIR files are inputs, not tests."""
    try:
        return _DIRECTIVE.search(path.read_bytes()) is not None
    except OSError:
        return False


class MlirShTest(lit.formats.ShTest):
    """ShTest, minus the files without directives, so lit and pytest run the same files."""

    def __init__(self) -> None:
        super().__init__(execute_external=False)

    def getTestsInDirectory(self, testSuite, path_in_suite, litConfig, localConfig):
        for test in super().getTestsInDirectory(testSuite, path_in_suite, litConfig, localConfig):
            if is_test_file(Path(test.getSourcePath())):
                yield test
