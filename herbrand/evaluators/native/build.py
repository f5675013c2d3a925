"""Compile the native kernels (``kernels``, ``tables`` and ``runs``, with what they call, and the
``exported`` kernels of ``compiled.EXPORTING_MODULES``) ahead of time into a CPython extension
module with numba's ``pycc``.

``python -m herbrand.evaluators.native.build DIRECTORY NAME`` writes the module ``NAME`` into
``DIRECTORY``: each entry point of ``ENTRY_POINTS`` compiled for its signature, with the
helpers it calls, into one shared library that needs numpy and a C runtime but neither numba
nor LLVM when imported (``compiled`` runs this once per version of the sources and loads the
result). Needs numba, setuptools and a C compiler; takes about 20 s on one core.

Every entry point is compiled to release the GIL while it runs (numba's ``nogil``), so that the
parallel backend's threads run kernels at once: ``pycc`` does not carry a function's own
``nogil`` option over, so the build sets the compiler flag itself.
"""

from __future__ import annotations

import importlib
import sys

from herbrand.evaluators.native.exported import BUILDING_VARIABLE

_ARRAY = "i8[::1]"
_TABLE = "i8[:, ::1]"  # a metadata table, a block of rows
_PROGRAM = "UniTuple(i8[::1], 20)"  # layout.PROGRAM_FIELDS arrays
_STORAGE = f"{_TABLE}, {_TABLE}, {_ARRAY}"  # rel_meta, ix_meta, ix_cols
_RUN_SCRATCH = ", ".join([_ARRAY] * 10)  # registers .. stack, part, progress, state, need
_RUN_SCRATCH_TASK = ", ".join([_ARRAY] * 9)  # registers .. stack, part, state, tickets

# entry point -> signature (the argument order of each kernel)
ENTRY_POINTS = {
    "rehash": f"void({_ARRAY}, {_ARRAY})",
    "rehash_part": f"void({_ARRAY}, {_ARRAY}, i8, i8)",
    "catch_up": f"i8({_STORAGE}, i8, {_ARRAY})",
    "catch_up_rule": f"i8({_PROGRAM}, i8, {_STORAGE}, {_ARRAY})",
    "fill_holes": f"i8({_STORAGE}, i8, i8, i8, {_ARRAY})",
    "append_rows": f"UniTuple(i8, 2)({_STORAGE}, i8, i8, {_TABLE}, i8, {_ARRAY})",
    "compact": f"i8({_STORAGE}, i8, {_ARRAY}, i4[::1], {_ARRAY})",
    "choose": f"i8({_PROGRAM}, i8, i8, {_TABLE}, {_TABLE}, {_ARRAY}, {_ARRAY})",
    "run": f"i8({_PROGRAM}, {_ARRAY}, {_ARRAY}, {_ARRAY}, {_STORAGE}, {_ARRAY}, {_ARRAY}, i8, "
           f"i8, {_RUN_SCRATCH}, {_TABLE})",
    "run_task": f"i8({_PROGRAM}, i8, {_STORAGE}, {_ARRAY}, {_ARRAY}, {_ARRAY}, "
                f"{_RUN_SCRATCH_TASK})",
}


def build(directory: str, name: str) -> None:
    """Compile the entry points into the extension module ``name`` in ``directory``."""
    import numba.pycc.compiler as pycc_compiler
    from numba.pycc import CC

    from herbrand.evaluators.native import choice, concurrent, kernels, runs, tables
    from herbrand.evaluators.native.compiled import EXPORTING_MODULES
    from herbrand.evaluators.native.exported import BUILDING, ENTRIES

    if not BUILDING:
        raise SystemExit(f"set {BUILDING_VARIABLE}=1 to build (``compiled`` does)")

    class _GilReleasingFlags(pycc_compiler.Flags):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            self.release_gil = True

    pycc_compiler.Flags = _GilReleasingFlags
    module = CC(name)
    module.output_dir = directory
    module.verbose = False
    for entry, signature in ENTRY_POINTS.items():
        function = next(getattr(source, entry)
                        for source in (kernels, choice, concurrent, tables, runs)
                        if hasattr(source, entry))
        module.export(entry, signature)(function.py_func)
    for name in EXPORTING_MODULES:
        importlib.import_module(name)  # its ``exported`` kernels register in ENTRIES
    for entry, signature, function in ENTRIES:
        module.export(entry, signature)(function.py_func)
    module.compile()


if __name__ == "__main__":
    build(sys.argv[1], sys.argv[2])
