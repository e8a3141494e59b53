"""The environment variables that choose the FileCheck engine a RUN line's FileCheck runs."""

from __future__ import annotations

ENGINE_ENV = "MLIRPIPE_FILECHECK"
LLVM_ENV = "MLIRPIPE_FILECHECK_LLVM"  # the LLVM FileCheck binary found or named for the suite
