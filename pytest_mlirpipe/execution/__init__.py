"""Execution side: models -> front end -> MLIR -> pipeline -> native code -> compared and timed."""
