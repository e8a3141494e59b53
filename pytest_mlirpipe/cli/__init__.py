"""The `mlirpipe` command: pipelines, passes, stages, imports, execution runs and the showcase."""
