"""Raw memory for the native kernels: int64 and int32 loads and stores at an address, and the
atomic operations threads use to insert at once (``tables._add_concurrently``), as numba
intrinsics.

The kernels read storage through the addresses in the metadata arrays (a load costs about a
nanosecond; fetching an array from a container, about a hundred). Each intrinsic is one LLVM
instruction; they are kept apart, not generated, so that each says what it is for.
"""

from __future__ import annotations

from llvmlite import ir
from numba import njit, types
from numba.core import cgutils
from numba.extending import intrinsic

from herbrand.evaluators.native.layout import (
    IX_NEXT,
    IX_SLOTS,
    R_ADDRESS,
    R_ARITY,
)


def _pointer(context, builder, address, type_):
    """The int64 ``address`` as a pointer to ``type_``, in an intrinsic's code."""
    return builder.inttoptr(address, context.get_value_type(types.CPointer(type_)))


@intrinsic
def _load(typingctx, address):
    """The int64 at ``address``."""
    def codegen(context, builder, signature, args):
        pointer = _pointer(context, builder, args[0], types.int64)
        return builder.load(pointer)
    return types.int64(types.int64), codegen

@intrinsic
def _store(typingctx, address, value):
    """Write the int64 ``value`` at ``address``."""
    def codegen(context, builder, signature, args):
        pointer = _pointer(context, builder, args[0], types.int64)
        builder.store(args[1], pointer)
        return context.get_dummy_value()
    return types.void(types.int64, types.int64), codegen


@intrinsic
def _load32(typingctx, address):
    """The int32 at ``address``, as an int64 (sign-extended: -1 stays -1)."""
    def codegen(context, builder, signature, args):
        pointer = _pointer(context, builder, args[0], types.int32)
        return builder.sext(builder.load(pointer), context.get_value_type(types.int64))
    return types.int64(types.int64), codegen


@intrinsic
def _store32(typingctx, address, value):
    """Write the int64 ``value`` (a row number below 2^31, or -1) as the int32 at
    ``address``."""
    def codegen(context, builder, signature, args):
        pointer = _pointer(context, builder, args[0], types.int32)
        builder.store(builder.trunc(args[1], context.get_value_type(types.int32)), pointer)
        return context.get_dummy_value()
    return types.void(types.int64, types.int64), codegen


@intrinsic
def _load_atomic(typingctx, address):
    """The int64 at ``address``, read atomically (a slot other threads may write)."""
    def codegen(context, builder, signature, args):
        pointer = _pointer(context, builder, args[0], types.int64)
        return builder.load_atomic(pointer, "acquire", 8)
    return types.int64(types.int64), codegen


@intrinsic
def _publish(typingctx, address, value):
    """Write the int64 ``value`` at ``address`` atomically, after every write before it."""
    def codegen(context, builder, signature, args):
        pointer = _pointer(context, builder, args[0], types.int64)
        builder.store_atomic(args[1], pointer, "release", 8)
        return context.get_dummy_value()
    return types.void(types.int64, types.int64), codegen


@intrinsic
def _swap_if(typingctx, address, expected, value):
    """Write ``value`` at ``address`` if it holds ``expected``, atomically; whether it did."""
    def codegen(context, builder, signature, args):
        pointer = _pointer(context, builder, args[0], types.int64)
        result = builder.cmpxchg(pointer, args[1], args[2], "acq_rel", "acquire")
        return builder.extract_value(result, 1)
    return types.boolean(types.int64, types.int64, types.int64), codegen


@intrinsic
def _fetch_add(typingctx, address, value):
    """Add ``value`` to the int64 at ``address`` atomically; the value before."""
    def codegen(context, builder, signature, args):
        pointer = _pointer(context, builder, args[0], types.int64)
        return builder.atomic_rmw("add", pointer, args[1], "monotonic")
    return types.int64(types.int64, types.int64), codegen


@intrinsic
def _prefetch(typingctx, address):
    """Start loading the cache line at ``address`` (for reading, kept in every cache level);
    no effect on the program's values."""
    def codegen(context, builder, signature, args):
        pointer = _pointer(context, builder, args[0], types.int8)
        i32 = ir.IntType(32)
        prefetch = cgutils.get_or_insert_function(
            builder.module, ir.FunctionType(ir.VoidType(), [pointer.type, i32, i32, i32]),
            "llvm.prefetch.p0")
        builder.call(prefetch, [pointer, i32(0), i32(3), i32(1)])
        return context.get_dummy_value()
    return types.void(types.int64), codegen


@njit(inline="always")
def _cell(rel_meta, rel, column, row):
    """The value at (column, row) of relation ``rel``."""
    return _load(rel_meta[rel, R_ADDRESS] + 8 * (row * rel_meta[rel, R_ARITY] + column))

@njit(inline="always")
def _slot(ix_meta, ix, s):
    return _load(ix_meta[ix, IX_SLOTS] + 8 * s)

@njit(inline="always")
def _set_slot(ix_meta, ix, s, row):
    _store(ix_meta[ix, IX_SLOTS] + 8 * s, row)

@njit(inline="always")
def _next(ix_meta, ix, row):
    """The row after ``row`` in its key's chain (EMPTY: none); chains are int32."""
    return _load32(ix_meta[ix, IX_NEXT] + 4 * row)
