"""The tools RUN lines call: `mlirpipe-opt`, each a function (argv, stdin, stdout, stderr) -> status."""
