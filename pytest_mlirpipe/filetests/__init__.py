"""RUN/CHECK file tests, shared by the pytest plugin and lit."""
