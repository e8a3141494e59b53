"""Registering Python passes: a taken name is refused naming both modules; a re-import is not."""

from __future__ import annotations

import sys
import types

import pytest

from pytest_mlirpipe.errors import PipelineSpecError
from pytest_mlirpipe.lowering import passes
from pytest_mlirpipe.lowering.passes import forbid_ops, registry

HERE = f"{__name__} ({__file__})"


@pytest.fixture(autouse=True)
def _own_registry(monkeypatch: pytest.MonkeyPatch) -> None:
    passes.all_passes()  # the built-in passes register once per process: before the copy
    monkeypatch.setattr(registry, "_REGISTRY", dict(registry._REGISTRY))


def _factory(module: str = __name__):
    def factory(options):
        return lambda op, pass_: None

    factory.__module__ = module
    return factory


def _module(monkeypatch: pytest.MonkeyPatch, name: str) -> str:
    """A module `name` in sys.modules whose file is /src/<name>.py."""
    module = types.ModuleType(name)
    module.__file__ = f"/src/{name}.py"
    monkeypatch.setitem(sys.modules, name, module)
    return f"{name} (/src/{name}.py)"


def test_a_pass_named_as_a_built_in_one_is_refused_naming_both_modules() -> None:
    with pytest.raises(PipelineSpecError) as info:
        passes.register("mlirpipe-forbid-ops", "mine")(_factory())
    assert str(info.value) == (
        f"error: pass 'mlirpipe-forbid-ops' of {HERE} would shadow the built-in pass of "
        f"{forbid_ops.__name__} ({forbid_ops.__file__}), registered under the same name\n"
        f"  hint: register the pass of {__name__} under another name (one starting with its "
        "project's name, say); a pipeline names each pass by one name"
    )
    assert passes.get("mlirpipe-forbid-ops").description != "mine"


def test_a_pass_named_as_another_modules_pass_is_refused_naming_both_modules(monkeypatch) -> None:
    first = _module(monkeypatch, "first_passes")
    passes.register("my-pass", "first")(_factory("first_passes"))
    with pytest.raises(PipelineSpecError) as info:
        passes.register("my-pass", "second")(_factory())
    assert str(info.value) == (
        f"error: pass 'my-pass' of {HERE} would shadow the pass of {first}, registered under "
        f"the same name\n  hint: register the pass of {__name__} under another name (one "
        "starting with its project's name, say); a pipeline names each pass by one name"
    )
    assert passes.get("my-pass").description == "first"


def test_a_built_in_pass_registered_after_a_plugins_pass_of_its_name_blames_the_plugin(
    monkeypatch,
) -> None:
    plugin = _module(monkeypatch, "plugin_passes")
    builtin = _module(monkeypatch, "pytest_mlirpipe.lowering.passes.late")
    passes.register("late-pass", "plugin's")(_factory("plugin_passes"))
    with pytest.raises(PipelineSpecError) as info:
        passes.register("late-pass", "built-in")(_factory("pytest_mlirpipe.lowering.passes.late"))
    assert str(info.value).splitlines() == [
        f"error: pass 'late-pass' of {plugin} would shadow the built-in pass of {builtin}, "
        "registered under the same name",
        "  hint: register the pass of plugin_passes under another name (one starting with "
        "its project's name, say); a pipeline names each pass by one name",
    ]


def test_the_module_that_registered_a_name_registers_it_again_when_imported_again() -> None:
    passes.register("my-pass", "before the re-import")(_factory())
    again = _factory()
    passes.register("my-pass", "after the re-import")(again)
    assert passes.get("my-pass").factory is again
    assert passes.get("my-pass").description == "after the re-import"


def test_an_exception_in_a_python_pass_fails_its_stage_naming_the_pass_and_where(tmp_path):
    import io

    from pytest_mlirpipe.tools import opt

    def factory(options):
        def run(op, pass_):
            raise ValueError("no rule for\n  this op")

        return run

    passes.register("test-raising-pass", "raises")(factory)
    source = tmp_path / "m.mlir"
    source.write_text("func.func @f() {\n  return\n}\n")
    out, err = io.StringIO(), io.StringIO()
    argv = [str(source), "--pass-pipeline", "builtin.module(test-raising-pass)"]
    status = opt.run(argv, io.StringIO(), out, err)
    assert status == 1
    assert (
        f"{source}: error: Python pass 'test-raising-pass' raised ValueError at {__file__}:"
    ) in err.getvalue()
    assert ": no rule for this op" in err.getvalue()
    assert "Traceback" not in err.getvalue()
