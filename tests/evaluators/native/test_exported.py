"""The kernels of other modules compiled ahead of time (``native.exported``): every entry point is
in the compiled module, arguments are checked, and a run of an incremental engine loads no numba."""

import importlib
import subprocess
import sys

import numpy as np
import pytest

from herbrand.evaluators.native.compiled import EXPORTING_MODULES, kernels
from herbrand.evaluators.native.exported import Entry, KernelSignatureError, _argument_types
from herbrand.evaluators.row_sets import _hashes, _insert


def _entries():
    for name in EXPORTING_MODULES:
        for value in vars(importlib.import_module(name)).values():
            if isinstance(value, Entry):
                yield name, value


def test_every_entry_point_is_compiled():
    module = kernels()
    entries = list(_entries())
    assert len(entries) >= 15
    for _, entry in entries:
        for name in entry._names:
            assert callable(getattr(module, name)), name


def test_argument_types_of_a_signature():
    assert _argument_types("UniTuple(i8, 3)(i8[::1], i8[:, ::1], i8, UniTuple(i8, 2))") == [
        "i8[::1]", "i8[:, ::1]", "i8", "UniTuple(i8, 2)"]
    assert _argument_types("void()") == []


def test_a_strided_input_is_read_as_its_values():
    block = np.arange(40, dtype=np.int64).reshape(4, 10)
    strided = block[:2, ::3]
    assert not strided.flags.c_contiguous
    assert np.array_equal(_hashes(strided), _hashes(np.ascontiguousarray(strided)))


def test_another_dtype_is_refused():
    with pytest.raises(KernelSignatureError, match="_hashes"):
        _hashes(np.zeros((2, 3), dtype=np.int32))


@pytest.mark.parametrize("argument", [np.zeros(3, dtype=np.int64), [[1, 2]], 7])
def test_another_number_of_dimensions_or_no_array_is_refused(argument):
    with pytest.raises(KernelSignatureError, match="_hashes"):
        _hashes(argument)


def test_a_strided_array_the_kernel_writes_is_refused():
    slots = np.full(16, -1, dtype=np.int64)
    stored = np.zeros((2, 16), dtype=np.int64)[:, ::2]
    block = np.ones((2, 1), dtype=np.int64)
    with pytest.raises(KernelSignatureError, match="stored"):
        _insert(slots, stored, 0, block, _hashes(block), 0, np.zeros(1, dtype=np.int64), 0)


def test_an_incremental_run_loads_no_numba():
    script = (
        "import sys, herbrand\n"
        "p = ('.decl e(x: number, y: number) .decl tc(x: number, y: number) .input e'\n"
        "     ' tc(x, y) :- e(x, y). tc(x, z) :- tc(x, y), e(y, z).')\n"
        "for engine in ('counting', 'dbsp', 'bf', 'dred', 'elastic'):\n"
        "    m = herbrand.incremental(p, facts={'e': [(1, 2), (2, 3)]}, engine=engine)\n"
        "    m.update(insert={'e': [(3, 4)]}); m.update(delete={'e': [(1, 2)]})\n"
        "    assert m.relation('tc') == {(2, 3), (2, 4), (3, 4)}, engine\n"
        "print('numba' in sys.modules, 'llvmlite' in sys.modules)\n")
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                            check=True)
    assert result.stdout.split() == ["False", "False"]


def test_a_signature_that_does_not_fit_the_parameters_is_refused():
    def kernel(a, b):
        return a

    with pytest.raises(KernelSignatureError, match="1 types for 2 parameters"):
        Entry(kernel, ("i8(i8[::1])",), ())
    with pytest.raises(KernelSignatureError, match="writes names no parameter"):
        Entry(kernel, ("i8(i8[::1], i8)",), ("out",))
