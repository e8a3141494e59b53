"""The tools RUN lines call (`mlirpipe-opt`), each a function (argv, streams) -> exit status."""
