"""Numba kernels of other modules, compiled into the ahead-of-time module with the executor's.

The index backings, the row sets and the incremental engines' merges have numba kernels of
their own. They mark them with these decorators instead of numba's ``njit``, so that a run
imports neither numba nor LLVM (about 0.25 s and 60 MB) nor loads each kernel from numba's
cache (about 10-25 ms each, the first time a process calls it):

- ``@exported("i8[::1](i8[:, ::1], u8[::1])", writes=("out",))``: a kernel Python calls, with
  its numba signatures (one or more). At run time the decorator returns an ``Entry``, which
  calls the function the compiled module (``compiled.kernels()``) holds for the first
  signature the arguments' arrays match. The compiled function does not check its arguments
  (it would read a strided array as if it were contiguous, an int32 array as int64), so the
  Entry does: an array argument of another dtype or number of dimensions is a herbrand bug
  (``KernelSignatureError``); one that is not C-contiguous where the signature says ``::1``
  is copied, unless the kernel writes into it (``writes``, by parameter name), which is an
  error too.
- ``@helper`` or ``@helper(inline="always")``: a function only kernels call. At run time it is
  left a plain Python function (never called).

``compiled`` sets ``BUILDING_VARIABLE`` in the environment of the process that compiles the
module; there both decorators return numba's ``njit`` functions, and ``exported`` records each
entry point in ``ENTRIES`` (its exported name, signature and function), which ``build``
exports.

Cost of a call through an Entry: a check of each array argument's type, dimensions and dtype
and of the contiguity of those the signature wants contiguous (read from plain tuples made
once: about 1.5 us for four arrays, against 4.5 us through the parameters' dataclasses and a
generator; a call of the compiled function itself costs about 2 us), plus a copy of any
strided input.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from herbrand.framework.errors import EvaluationError

BUILDING_VARIABLE = "HERBRAND_BUILDING_KERNELS"
BUILDING = os.environ.get(BUILDING_VARIABLE) == "1"
# (exported name, numba signature, the njit function), filled only while building
ENTRIES: list[tuple[str, str, Callable]] = []

# the array element types the exported kernels' signatures use
_DTYPES = {"i8": np.int64, "i4": np.int32, "i2": np.int16, "i1": np.int8, "u1": np.uint8,
           "u2": np.uint16, "u4": np.uint32, "u8": np.uint64, "b1": np.bool_}
_ARRAY = re.compile(r"^(\w+)\[([^\]]*)\]$")


class KernelSignatureError(EvaluationError):
    """A kernel's signature does not fit its parameters, or it was called with an array it was
    not compiled for (a herbrand bug either way)."""


@dataclass(frozen=True)
class _ArrayParameter:
    position: int
    name: str
    dtype: np.dtype
    ndim: int
    contiguous: bool
    written: bool


def exported_name(function: Callable, number: int) -> str:
    """The name of the entry point of ``function``'s signature ``number`` in the compiled
    module: its module, name and the number."""
    return f"{function.__module__.replace('.', '_')}__{function.__name__}__{number}"


def _argument_types(signature: str) -> list[str]:
    """The argument types of a numba signature ``ret(arg, ...)``: the last parenthesized group,
    split at its top-level commas."""
    depth = 0
    for opening in range(len(signature) - 1, -1, -1):
        depth += signature[opening] in ")]"
        depth -= signature[opening] in "(["
        if depth == 0:
            break
    types, depth, begin = [], 0, opening + 1
    for i in range(opening + 1, len(signature) - 1):
        depth += signature[i] in "(["
        depth -= signature[i] in ")]"
        if signature[i] == "," and depth == 0:
            types.append(signature[begin:i].strip())
            begin = i + 1
    last = signature[begin:-1].strip()
    return [*types, last] if last else types


def _array_parameters(function: Callable, signature: str,
                      writes: tuple[str, ...]) -> tuple[_ArrayParameter, ...]:
    """The array parameters of ``function`` under ``signature``, checked against its
    parameter names."""
    names = function.__code__.co_varnames[:function.__code__.co_argcount]
    types = _argument_types(signature)
    if len(types) != len(names):
        raise KernelSignatureError(
            f"{function.__name__}: {len(types)} types for {len(names)} parameters")
    unknown = set(writes) - set(names)
    if unknown:
        raise KernelSignatureError(
            f"{function.__name__}: writes names no parameter: {sorted(unknown)}")
    arrays = []
    for position, (name, text) in enumerate(zip(names, types, strict=True)):
        match = _ARRAY.match(text)
        if match is None:
            continue
        dims = match.group(2).split(",")
        arrays.append(_ArrayParameter(position, name, np.dtype(_DTYPES[match.group(1)]),
                                      len(dims), dims[-1].strip() == "::1", name in writes))
    return tuple(arrays)


class Entry:
    """A kernel compiled ahead of time for one or more signatures, called with its arguments
    checked (see the module doc): the first signature whose arrays' dtypes and dimensions
    match is the one called. The compiled functions are looked up on the first call."""

    __slots__ = ("__name__", "_checks", "_functions", "_names", "_signatures")

    def __init__(self, function: Callable, signatures: tuple[str, ...],
                 writes: tuple[str, ...]):
        self.__name__ = function.__name__
        self._names = tuple(exported_name(function, number) for number in range(len(signatures)))
        self._signatures = tuple(_array_parameters(function, signature, writes)
                                 for signature in signatures)
        # per signature, (position, dtype, ndim) of each array parameter, then the positions
        # of those it wants C-contiguous: plain tuples, read on every call
        self._checks = tuple((tuple((p.position, p.dtype, p.ndim) for p in arrays),
                              tuple(p.position for p in arrays if p.contiguous))
                             for arrays in self._signatures)
        self._functions: tuple[Callable, ...] | None = None

    def __call__(self, *arguments):
        functions = self._functions
        if functions is None:
            from herbrand.evaluators.native.compiled import kernels

            module = kernels()
            functions = self._functions = tuple(getattr(module, n) for n in self._names)
        for function, (arrays, contiguous), parameters in zip(
                functions, self._checks, self._signatures, strict=True):
            for position, dtype, ndim in arrays:
                value = arguments[position]
                if not (isinstance(value, np.ndarray) and value.ndim == ndim
                        and (value.dtype is dtype or value.dtype == dtype)):
                    break
            else:
                for position in contiguous:
                    if not arguments[position].flags.c_contiguous:
                        return function(*_contiguous(self.__name__, arguments, parameters))
                return function(*arguments)
        raise KernelSignatureError(
            f"kernel {self.__name__} is not compiled for "
            f"({', '.join(_described(a) for a in arguments)})")


def _contiguous(name: str, arguments: tuple, arrays: tuple[_ArrayParameter, ...]) -> tuple:
    """``arguments`` with a C-contiguous copy of each strided array the signature wants
    contiguous; KernelSignatureError for one the kernel writes."""
    for parameter in arrays:
        value = arguments[parameter.position]
        if parameter.contiguous and not value.flags.c_contiguous:
            if parameter.written:
                raise KernelSignatureError(
                    f"kernel {name} writes {parameter.name}, which is not C-contiguous")
            arguments = (*arguments[:parameter.position], np.ascontiguousarray(value),
                         *arguments[parameter.position + 1:])
    return arguments


def _described(value) -> str:
    if isinstance(value, np.ndarray):
        return f"a {value.ndim}-d {value.dtype} array"
    return type(value).__name__


def exported(*signatures: str, writes: tuple[str, ...] = ()
             ) -> Callable[[Callable], Callable]:
    """Mark a kernel that Python calls, compiled for each of ``signatures`` (see the module
    doc)."""

    def mark(function: Callable):
        if BUILDING:
            from numba import njit

            compiled = njit(nogil=True)(function)
            ENTRIES.extend((exported_name(function, number), signature, compiled)
                           for number, signature in enumerate(signatures))
            return compiled
        return Entry(function, signatures, writes)

    return mark


def helper(function: Callable | None = None, **options) -> Callable:
    """Mark a function only kernels call, with numba's ``njit`` options (see the module doc)."""

    def mark(inner: Callable):
        if BUILDING:
            from numba import njit

            return njit(nogil=True, **options)(inner)
        return inner

    return mark(function) if function is not None else mark
