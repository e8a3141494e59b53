"""The CHECK-line lint on lines shaped like those of public MLIR suites: each file with the
findings it must give (the real mistakes) and none of those it must not (correct lines)."""

from __future__ import annotations

import re
from dataclasses import dataclass

import pytest

from pytest_mlirpipe.filetests.lint import checked_by, lint_text

SOURCE = "/suite/t.mlir"


@dataclass(frozen=True, slots=True)
class Case:
    """A file, the (line, kind) of each finding it must give, and a kind it must not give."""

    text: str
    must: tuple[tuple[int, str], ...] = ()
    must_not: str = ""


def _findings(text: str, configured: str = "auto") -> list[tuple[int, str, str]]:
    """(line, kind, the finding as printed) of `text`, its RUN lines expanded as lit would
    (`%s` the file itself; one command a RUN line)."""
    runs = re.findall(r"^// RUN: (.*)$", text, re.MULTILINE)
    script = [f"%dbg(RUN: at line {n}) {r.replace('%s', SOURCE)}" for n, r in enumerate(runs, 1)]
    found = lint_text(text, checked_by(script, SOURCE, configured=configured))
    return [(f.line, f.kind.value, f.format("t.mlir")) for f in found]


CORPUS = {
    # A suite whose RUN lines run the Python `filecheck`: it matches a first CHECK-NEXT against
    # the output's first line, and lit passes these files.
    "python-filecheck-next-first": Case(
        "// RUN: xdsl-opt %s -p canonicalize | filecheck %s\n"
        "\n"
        "builtin.module {\n"
        "  %0 = arith.constant 1 : i32\n"
        "}\n"
        "\n"
        "// CHECK-NEXT: builtin.module {\n"
        "// CHECK-NEXT:   %0 = arith.constant 1 : i32\n"
        "// CHECK-NEXT: }\n",
        must_not="nothing-to-follow",
    ),
    "python-m-filecheck-same-first": Case(
        "// RUN: xdsl-opt %s | python3 -m filecheck %s\n"
        "// CHECK-SAME: builtin.module\n"
        "// CHECK-NEXT: }\n",
        must_not="nothing-to-follow",
    ),
    "python-filecheck-empty-first": Case(
        "// RUN: xdsl-opt %s | filecheck %s\n// CHECK-EMPTY:\n// CHECK-NEXT: builtin.module\n",
        must=((2, "nothing-to-follow"),),
    ),
    "llvm-filecheck-next-first": Case(
        "// RUN: mlir-opt %s -canonicalize | FileCheck %s\n"
        "// CHECK-NEXT: module {\n"
        "// CHECK-NEXT: }\n",
        must=((2, "nothing-to-follow"),),
    ),
    # Upper-case words that start sentences of comments are prose, not prefixes.
    "critical-prose": Case(
        "// RUN: mlir-opt %s -test-pass | FileCheck %s\n"
        "\n"
        "// CRITICAL: the pass must not reorder the two stores below, since the second\n"
        "// CRITICAL: aliases the first through the subview.\n"
        "// CHECK-LABEL: func @stores\n"
        "// IMPORTANT: keep this test small; it runs under valgrind.\n"
        "// IMPORTANT: see the note at the top of the pass.\n"
        "func.func @stores() {\n  return\n}\n",
        must_not="unchecked-prefix",
    ),
    # ...but a prefix with a suffix, or with a pattern, is a prefix in use.
    "unchecked-buf-with-patterns": Case(
        "// RUN: mlirpipe-opt %s --pipeline refbackend | FileCheck %s --check-prefix=LLVM\n"
        "// BUF: linalg.matmul ins({{.*}} : memref<2x2xf32>, memref<2x2xf32>)\n"
        "// BUF: return %{{.*}}\n"
        "// LLVM: llvm.fmul\n",
        must=((2, "unchecked-prefix"),),
    ),
    "unchecked-prefix-with-a-suffix": Case(
        "// RUN: mlir-opt %s | FileCheck %s\n// CHECK: func\n// FOLD-LABEL: func @f\n",
        must=((3, "unchecked-prefix"),),
    ),
    "unchecked-variant-of-a-checked-prefix": Case(
        "// RUN: mlir-opt %s | FileCheck %s --check-prefix=VEC\n"
        "// VEC: vector.load\n"
        "// VEC-AVX512: vector.fma\n",
        must=((3, "unchecked-prefix"),),
    ),
    # CHECK lines of a file whose only RUN line runs no FileCheck.
    "check-lines-no-run-line-checks": Case(
        "// RUN: mlir-opt %s -split-input-file -verify-diagnostics\n"
        "// CHECK-LABEL: func @a\n"
        "// CHECK: arith.addi\n"
        "// CHECK: return\n",
        must=((2, "unchecked-prefix"),),
    ),
    # {LITERAL} written as a suffix: FileCheck ignores the line.
    "check-same-literal": Case(
        "// RUN: mlir-opt %s | FileCheck %s\n"
        "// CHECK-LABEL: func @dense\n"
        "// CHECK-SAME-LITERAL: dense<[[1, 2], [3, 4]]>\n"
        "// CHECK-NEXT-LITERAL: [[0]]\n",
        must=((3, "misspelled-directive"), (4, "misspelled-directive")),
        must_not="unchecked-prefix",
    ),
    "space-missing-colon-misspelled": Case(
        "// RUN: mlir-opt %s | FileCheck %s\n"
        "// CHECK-LABEL: func @f\n"
        "// CHECK : arith.constant\n"
        "// CHECK-DAG %[[C0:.*]] = arith.constant 0\n"
        "// CHECK-SANE: index\n",
        must=((3, "space-before-colon"), (4, "missing-colon"), (5, "misspelled-directive")),
    ),
    # Short prefixes (the README's BUF): a swap of neighbours, or a case-only difference.
    "short-prefix-swap-and-case": Case(
        "// RUN: mlirpipe-opt %s --stop-after bufferize | FileCheck %s --check-prefix=BUF\n"
        "// BUF-LABEL: func.func @forward\n"
        "// BFU: linalg.matmul\n"
        "// BUf: return\n"
        "// Buf: a comment that starts with a capital\n",
        must=((3, "misspelled-directive"), (4, "misspelled-directive")),
    ),
}


@pytest.mark.parametrize("case", CORPUS.values(), ids=CORPUS.keys())
def test_each_corpus_file_gives_exactly_its_findings(case):
    found = _findings(case.text)
    assert [(line, kind) for line, kind, _ in found] == list(case.must)
    assert case.must_not not in {kind for _, kind, _ in found}


def test_check_same_literal_is_said_to_mean_the_literal_modifier():
    text = CORPUS["check-same-literal"].text
    assert [printed for _, _, printed in _findings(text)] == [
        "t.mlir:3: warning: 'CHECK-SAME-LITERAL:' is not a directive FileCheck knows, so it "
        "ignores the line; did you mean 'CHECK-SAME{LITERAL}:'? [misspelled-directive]",
        "t.mlir:4: warning: 'CHECK-NEXT-LITERAL:' is not a directive FileCheck knows, so it "
        "ignores the line; did you mean 'CHECK-NEXT{LITERAL}:'? [misspelled-directive]",
    ]


def test_the_projects_own_filecheck_is_judged_by_the_engine_it_runs():
    text = (
        "// RUN: mlirpipe-opt %s | /venv/bin/python -mpytest_mlirpipe.tools.filecheck %s\n"
        "// CHECK-NEXT: module\n"
    )
    assert _findings(text, configured="python") == []
    assert [kind for _, kind, _ in _findings(text, configured="auto")] == ["nothing-to-follow"]
    assert [kind for _, kind, _ in _findings(text, configured="llvm")] == ["nothing-to-follow"]
