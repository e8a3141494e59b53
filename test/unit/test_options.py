"""One declaration of every option: the RunConfig read from flags and ini keys, the messages of
bad values, and the `mlirpipe` flags built from the same entries."""

from __future__ import annotations

import argparse
from typing import Any

import pytest

from pytest_mlirpipe.options import (
    BY_NAME,
    OPTIONS,
    Option,
    OptionValueError,
    RunConfig,
    add_cli_options,
    read_run_config,
)


def _read(flags: dict[str, Any] | None = None, ini: dict[str, Any] | None = None) -> RunConfig:
    """The RunConfig of these flag and ini values (the rest: not given / the ini defaults)."""
    flags, ini = flags or {}, ini or {}

    def flag(o: Option) -> Any:
        return flags.get(o.name, [] if o.action == "append" else None)

    def ini_value(o: Option) -> Any:
        default = list(o.default) if isinstance(o.default, tuple) else o.default
        return ini.get(o.name, default)

    return read_run_config(flag, ini_value, base="/repo")


def test_without_flags_or_ini_keys_the_defaults_apply():
    config = _read()
    assert config == RunConfig(suite=config.suite)
    assert config.suite.suffixes == (".mlir",)
    assert config.suite.base == "/repo"


def test_the_lint_mode_is_warn_unless_the_flag_or_ini_key_says_otherwise():
    assert _read().lint == "warn"
    assert _read(ini={"lint": "off"}).lint == "off"
    assert _read(flags={"lint": "error"}, ini={"lint": "off"}).lint == "error"


def test_a_flag_wins_over_the_ini_key_and_pipeline_folders_add_up():
    config = _read(
        flags={"threads": 4, "isolation": "none", "pipelines": ["cli-dir"], "suffixes": ".td"},
        ini={"threads": "2", "isolation": "subprocess", "pipelines": ["ini-dir"]},
    )
    assert (config.threads, config.isolation) == (4, "none")
    assert config.pipeline_dirs == ("cli-dir", "ini-dir")
    assert config.suite.suffixes == (".td",)


def test_timing_is_on_with_the_flag_or_the_ini_key():
    assert _read().time is False
    assert _read(flags={"time": True}).time is True
    assert _read(ini={"time": True}).time is True


@pytest.mark.parametrize(
    ("ini", "message"),
    [
        (
            {"threads": "many"},
            "error: mlirpipe_threads must be a positive integer, not 'many'\n"
            "  hint: e.g. --mlirpipe-threads 2",
        ),
        ({"mode": "interpreted"}, "error: mlirpipe_mode must be 'jit' or 'aot', not 'interpreted'"),
        (
            {"isolation": "thread"},
            "mlirpipe: mlirpipe_isolation must be one of fork, none, subprocess, got 'thread'",
        ),
        (
            {"lint": "loud"},
            "mlirpipe: mlirpipe_lint must be one of off, warn, error, got 'loud'",
        ),
        (
            {"timeout": "-1"},
            "mlirpipe: the timeout must be a number of seconds >= 0 (0: none), got '-1' "
            "(--mlirpipe-timeout / mlirpipe_timeout)",
        ),
        (
            {"suffixes": [".mlir", "td"]},
            "mlirpipe: suffixes must start with '.', got 'td' (e.g. --mlirpipe-suffixes=.mlir,.td)",
        ),
    ],
)
def test_a_bad_value_is_rejected_with_the_accepted_form(ini, message):
    with pytest.raises(OptionValueError) as caught:
        _read(ini=ini)
    assert str(caught.value) == message


def test_a_thread_count_of_0_given_as_a_flag_is_rejected_not_replaced_by_the_ini_key():
    with pytest.raises(OptionValueError) as caught:
        _read(flags={"threads": 0}, ini={"threads": "2"})
    assert str(caught.value) == (
        "error: mlirpipe_threads must be a positive integer, not '0'\n"
        "  hint: e.g. --mlirpipe-threads 2"
    )


def test_a_timing_report_path_that_cannot_be_a_file_is_rejected_before_the_run(tmp_path):
    (tmp_path / "notes.txt").write_text("")
    with pytest.raises(OptionValueError) as caught:
        _read(flags={"json": str(tmp_path)})
    assert str(caught.value) == (
        f"mlirpipe: --mlirpipe-json {tmp_path}: it is a folder; the timing report is a file "
        f"(e.g. --mlirpipe-json {tmp_path / 'timing.json'})"
    )
    inside_a_file = tmp_path / "notes.txt" / "sub" / "t.json"
    with pytest.raises(OptionValueError) as caught:
        _read(flags={"json": str(inside_a_file)})
    assert str(caught.value) == (
        f"mlirpipe: --mlirpipe-json {inside_a_file}: {tmp_path / 'notes.txt'} is a file, "
        "not a folder"
    )
    new_folder = tmp_path / "reports" / "t.json"  # made at the end, as --junitxml makes it
    assert _read(flags={"json": str(new_folder)}).json_path == str(new_folder)


def test_the_mlirpipe_run_flags_come_from_the_same_declaration():
    parser = argparse.ArgumentParser()
    add_cli_options(parser, "mode", "threads", "time", "json", "pipelines")
    defaults = parser.parse_args([])
    assert vars(defaults) == {
        "mode": "jit",
        "threads": 1,
        "no_time": False,
        "json": None,
        "pipelines_dir": [],
    }
    given = parser.parse_args(["--threads", "3", "--no-time", "--pipelines-dir", "a"])
    assert (given.threads, given.no_time, given.pipelines_dir) == (3, True, ["a"])
    assert BY_NAME["threads"].type is int


def test_every_pytest_flag_and_ini_key_is_named_after_its_option():
    flags = [o.flag_name for o in OPTIONS if o.flag]
    assert "--mlirpipe-threads" in flags and "--mlirpipe-no-cache" in flags
    assert {o.ini_name for o in OPTIONS if o.ini} >= {"mlirpipe_tools", "mlirpipe_cache_dir"}
