"""Pipelines as data and the stage runner."""
