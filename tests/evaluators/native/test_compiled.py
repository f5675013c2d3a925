"""The kernels compiled ahead of time: built once per version into the cache (once, when
processes race), loaded without numba or LLVM, and a failed build said in one line."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

from herbrand.evaluators.native import compiled
from tests.herbrand_zip import herbrand_zip, run_from_zip


def _python(code: str, cwd=None, **env: str) -> subprocess.Popen:
    """``code`` in a new interpreter; ``-P``: its working directory is not on its path."""
    return subprocess.Popen([sys.executable, "-P", "-c", textwrap.dedent(code)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, **env}, cwd=cwd)


def test_a_run_loads_neither_numba_nor_llvm():
    run = _python("""
        import sys
        import numpy as np
        import herbrand
        program = '''.decl e(x: number, y: number)
        .decl tc(x: number, y: number)
        tc(x, y) :- e(x, y).
        tc(x, z) :- tc(x, y), e(y, z).'''
        edges = np.stack([np.arange(200), np.arange(1, 201)], axis=1)
        db = herbrand.materialize(program, {"e": edges}, evaluator="native")
        print(len(db["tc"]), "numba" in sys.modules, "llvmlite" in sys.modules)
    """)
    out, err = run.communicate(timeout=300)
    assert run.returncode == 0, err
    assert out.split() == [str(200 * 201 // 2), "False", "False"]


def test_processes_that_race_build_the_module_once_and_later_ones_load_it(tmp_path):
    """The racers run where another (broken) herbrand checkout is the working directory: the
    build still compiles the sources of the herbrand that asked for it."""
    decoy = tmp_path.parent / (tmp_path.name + "-decoy")
    (decoy / "herbrand").mkdir(parents=True)
    (decoy / "herbrand" / "__init__.py").write_text("raise ImportError('the decoy checkout')")
    load = "from herbrand.evaluators.native.compiled import kernels; print(kernels().__file__)"
    racing = [_python(load, cwd=decoy, HERBRAND_CACHE_DIR=str(tmp_path)) for _ in range(2)]
    results = [process.communicate(timeout=900) for process in racing]
    assert [process.returncode for process in racing] == [0, 0], results
    paths = {out.strip() for out, _ in results}
    assert len(paths) == 1 and paths.pop().startswith(str(tmp_path))
    messages = [err for _, err in results if "compiling the native kernels" in err]
    assert len(messages) == 1, results  # the other waited for the lock, then loaded it
    later = _python(load, HERBRAND_CACHE_DIR=str(tmp_path))
    out, err = later.communicate(timeout=300)
    assert later.returncode == 0 and err == ""
    assert sorted(p.suffix for p in tmp_path.iterdir()) == [".lock", ".so"]


def test_a_failed_build_is_one_line_and_leaves_no_module(tmp_path, monkeypatch):
    monkeypatch.setattr(sys, "executable", "false")  # the build's child process fails
    name = compiled.module_name()
    path = tmp_path / (name + ".so")
    with pytest.raises(compiled.KernelBuildError) as error:
        compiled._build(tmp_path, name, path)
    message = str(error.value)
    assert "\n" not in message and "--evaluator relational" in message
    assert not path.exists() and [p.suffix for p in tmp_path.iterdir()] == [".lock"]


def test_the_module_name_changes_with_the_sources(monkeypatch):
    sources = {source: b"" for source in compiled._SOURCES}
    monkeypatch.setattr(compiled, "_source", lambda package, name: sources[package, name])
    names = {compiled.module_name()}
    native = "herbrand.evaluators.native"
    for source in ((native, "kernels.py"), (native, "views.py"),
                   ("herbrand.framework", "native_view.py")):  # the view's layout too
        sources[source] = b"changed"
        names.add(compiled.module_name())
    assert len(names) == 4


def test_herbrand_imported_from_a_zip_finds_the_same_module_name(tmp_path):
    archive = herbrand_zip(tmp_path / "herbrand.zip")
    result = run_from_zip(archive, "import herbrand; "
                          "from herbrand.evaluators.native.compiled import module_name; "
                          "print(herbrand.__file__, module_name())")
    assert result.stdout.split() == [str(archive / "herbrand" / "__init__.py"),
                                     compiled.module_name()], result.stderr[-1000:]


def test_only_the_most_recent_modules_are_kept(tmp_path):
    import importlib.machinery

    suffix = importlib.machinery.EXTENSION_SUFFIXES[0]
    for age in range(compiled.KEEP + 3):
        module = tmp_path / f"kernels_{age:016x}{suffix}"
        module.write_bytes(b"")
        (tmp_path / f"kernels_{age:016x}.lock").write_bytes(b"")
        os.utime(module, (1_000_000 - age, 1_000_000 - age))  # higher age: built earlier
    compiled._prune(tmp_path)
    kept = sorted(p.name for p in tmp_path.iterdir())
    assert kept == sorted([f"kernels_{age:016x}{suffix}" for age in range(compiled.KEEP)]
                          + [f"kernels_{age:016x}.lock" for age in range(compiled.KEEP)])
