"""Conformance checks for IndexBacking implementations, after scikit-learn's ``check_estimator``.

    check_index(MyIndex)  # raises IndexCheckError (an AssertionError) naming each failed check
    check_index(MyIndex, expected_failures={"check_range_matches_filter": "bounds are exclusive"})

Each check is a function ``check_<property>(IndexClass)`` that builds fresh instances with
``IndexClass(arity=..., key=...)`` (other hyperparameters keep their defaults), asserts one
property of the contract and raises AssertionError describing the failing case. The class's
``tags`` decide which checks apply: ``check_delete_then_reinsert`` needs ``supports_delete``,
``check_range_matches_filter`` needs ``ordered``, ``check_snapshot_isolation`` needs
``persistent``, ``check_native_view_matches_join`` needs ``native``; the others always
apply. Known failures are data (check name -> reason) and strict: a declared failure that
passes is an error, so a fixed gap gets noticed.

In pytest, one test per (class, check) with readable ids and strict xfails:

    @pytest.mark.parametrize(("index_class", "check"), index_check_params(MyIndex))
    def test_conformance(index_class, check):
        check(index_class)

The data are deterministic (seeded per check) and small: the join oracle is a nested loop.
"""

from __future__ import annotations

import inspect
import itertools
import zlib
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping

import numpy as np

from herbrand.framework.contracts import IndexBacking

Row = tuple[int, ...]
Check = Callable[[type[IndexBacking]], None]

_INT64 = np.iinfo(np.int64)
# Values beyond 32 bits and at the int64 extremes, mixed into some rows so that implementations
# that pack columns into one integer must take their fallback path.
_WIDE_VALUES = (-1, -7, 2**31, -(2**31) - 1, 2**40 + 3, int(_INT64.max), int(_INT64.min))


class IndexCheckError(AssertionError):
    """Some checks failed, or a declared known failure passed.

    ``outcomes`` maps every check run to "passed", "expected failure: <reason>", "failed: <error>"
    or "passed but declared failing: <reason>".
    """

    def __init__(self, message: str, outcomes: dict[str, str]):
        super().__init__(message)
        self.outcomes = outcomes


# -- Data and oracles ----------


def _rng(name: str) -> np.random.Generator:
    return np.random.default_rng(zlib.crc32(name.encode()))


def _random_rows(rng: np.random.Generator, n: int, arity: int, *, wide: bool = False) -> list[Row]:
    """n random rows over a few small values (so keys collide), some wide values if ``wide``."""
    values = rng.integers(0, 4, size=(n, arity))
    if wide:
        exotic = rng.random((n, arity)) < 0.25
        values[exotic] = rng.choice(_WIDE_VALUES, size=int(exotic.sum()))
    return [tuple(int(v) for v in row) for row in values]


def _unique_rows(rng: np.random.Generator, n: int, arity: int, *, wide: bool = False) -> list[Row]:
    return list(dict.fromkeys(_random_rows(rng, n, arity, wide=wide)))  # first occurrences


def _batch(rows: Iterable[Row], arity: int) -> np.ndarray:
    rows = list(rows)
    return np.array(rows, dtype=np.int64).reshape(len(rows), arity).T.copy()


def _tuples(batch: np.ndarray, arity: int, what: str) -> list[Row]:
    batch = np.asarray(batch)
    assert batch.ndim == 2 and batch.shape[0] == arity, f"{what}: shape {batch.shape}, expected ({arity}, n)"
    assert batch.dtype == np.int64, f"{what}: dtype {batch.dtype}, expected int64"
    return [tuple(int(v) for v in batch[:, j]) for j in range(batch.shape[1])]


def _stored(index: IndexBacking) -> list[Row]:
    """index.rows() as a sorted list of tuples, checked for shape and duplicates."""
    rows = sorted(_tuples(index.rows(), index.arity, f"{index!r}.rows()"))
    repeated = [row for row, count in Counter(rows).items() if count > 1]
    assert not repeated, f"{index!r}.rows() repeats rows, e.g. {repeated[:3]}"
    return rows


def _pairs(index: IndexBacking, probe: list[Row], probe_arity: int, probe_key: Row) -> list:
    positions, rows = index.join(_batch(probe, probe_arity), probe_key)
    what = f"{index!r}.join(probe, {probe_key})"
    positions = np.asarray(positions)
    assert positions.ndim == 1, f"{what}: positions have shape {positions.shape}"
    assert positions.dtype.kind in "iu", f"{what}: positions have dtype {positions.dtype}"
    matched = _tuples(rows, index.arity, f"{what} rows")
    assert len(matched) == len(positions), f"{what}: {len(positions)} positions, {len(matched)} rows"
    return sorted(zip(positions.tolist(), matched, strict=True))


def _assert_same(got: list, expected: list, what: str) -> None:
    if got == expected:
        return
    missing = list((Counter(expected) - Counter(got)).elements())
    extra = list((Counter(got) - Counter(expected)).elements())
    raise AssertionError(
        f"{what}: {len(missing)} missing, e.g. {missing[:3]}; {len(extra)} unexpected, "
        f"e.g. {extra[:3]}"
    )


def _assert_contents(index: IndexBacking, expected: Iterable[Row], what: str) -> None:
    expected = sorted(set(expected))
    _assert_same(_stored(index), expected, f"{what}: {index!r}.rows()")
    assert len(index) == len(expected), f"{what}: len is {len(index)}, expected {len(expected)}"


def _probe_for(rng: np.random.Generator, stored: list[Row], m: int, probe_arity: int,
               key: Row, probe_key: Row) -> list[Row]:
    """Random probe rows, half of them copying the key of a stored row so that joins match."""
    probe = [list(row) for row in _random_rows(rng, m, probe_arity)]
    for row in probe[: m // 2] if stored else ():
        source = stored[int(rng.integers(len(stored)))]
        for k, q in zip(key, probe_key, strict=True):
            row[q] = source[k]
    return [tuple(row) for row in probe]


def _check_join(index: IndexBacking, stored: Iterable[Row], probe: list[Row],
                probe_arity: int, probe_key: Row, what: str) -> None:
    pairs = tuple(zip(index.key, probe_key, strict=True))
    expected = sorted((i, row) for i, p in enumerate(probe) for row in set(stored)
                      if all(row[k] == p[q] for k, q in pairs))
    _assert_same(_pairs(index, probe, probe_arity, probe_key), expected,
                 f"{what}: join on probe_key={probe_key} vs nested loop")


# -- The checks ----------


def check_bulk_insert_equals_single_inserts(IndexClass: type[IndexBacking]) -> None:
    """One batch, one row at a time, and random batches (some empty) give the same index."""
    rng = _rng("bulk")
    for arity, key in [(3, (1,)), (2, (1, 0)), (1, ()), (4, (3, 0))]:
        rows = _unique_rows(rng, 40, arity, wide=arity == 4)
        bulk, single, split = (IndexClass(arity=arity, key=key) for _ in range(3))
        bulk.insert(_batch(rows, arity))
        for row in rows:
            single.insert(_batch([row], arity))
        cuts = sorted(rng.integers(0, len(rows) + 1, size=5).tolist())
        for a, b in zip([0, *cuts], [*cuts, len(rows)], strict=True):
            split.insert(_batch(rows[a:b], arity))
        probe = _probe_for(rng, rows, 12, arity, key, key)
        for name, index in [("one batch", bulk), ("row by row", single), ("random batches", split)]:
            what = f"arity={arity}, key={key}, inserted {name}"
            _assert_contents(index, rows, what)
            _check_join(index, rows, probe, arity, key, what)


def check_duplicates_ignored(IndexClass: type[IndexBacking]) -> None:
    """Rows repeated within a batch or across batches are stored once."""
    rng = _rng("duplicates")
    for arity, key in [(2, (0,)), (3, (2, 1)), (0, ())]:
        rows = _unique_rows(rng, 20, arity) if arity else [()]
        repeated = [row for row in rows for _ in range(int(rng.integers(1, 4)))]
        rng.shuffle(repeated)
        index = IndexClass(arity=arity, key=key)
        index.insert(_batch(repeated, arity))
        _assert_contents(index, rows, f"arity={arity}, key={key}, duplicates within a batch")
        more = rows[: len(rows) // 2 + 1] + _unique_rows(rng, 6, arity)
        index.insert(_batch(more, arity))
        index.insert(_batch(more, arity))
        _assert_contents(index, rows + more, f"arity={arity}, key={key}, across batches")
        probe = _probe_for(rng, rows, 8, 2, key, tuple(range(len(key))))
        _check_join(index, rows + more, probe, 2, tuple(range(len(key))), f"arity={arity}")


def _join_cases(rng: np.random.Generator) -> Iterator[tuple[str, int, Row, list[Row], int, Row]]:
    """(what, arity, key, stored rows, probe arity, probe_key) for the join check."""
    for keylen in range(4):  # every key of arity 3: each subset in each column order
        for key in itertools.permutations(range(3), keylen):
            probe_key = tuple(int(c) for c in rng.integers(0, 4, size=keylen))  # repeats allowed
            yield f"key={key}", 3, key, _random_rows(rng, 30, 3, wide=keylen == 2), 4, probe_key
    for size in range(7):  # every subset of the columns of arity 6
        for key in itertools.combinations(range(6), size):
            rows = _random_rows(rng, 25, 6, wide=len(key) % 2 == 1)
            yield f"wide arity 6, key={key}", 6, key, rows, 6, key[::-1]
    yield "empty index", 2, (0,), [], 2, (1,)
    yield "single row", 2, (1,), [(5, 6)], 3, (2,)
    yield "all-equal keys", 2, (0,), [(7, v) for v in range(30)], 2, (0,)
    yield "int64 extremes", 2, (0, 1), _random_rows(rng, 40, 2, wide=True), 2, (1, 0)
    yield "arity 1", 1, (0,), _random_rows(rng, 10, 1, wide=True), 1, (0,)
    yield "arity 0, stored", 0, (), [()], 2, ()
    yield "arity 0, empty", 0, (), [], 2, ()


def check_join_matches_nested_loop(IndexClass: type[IndexBacking]) -> None:
    """join returns exactly the (probe position, stored row) pairs of a nested-loop join."""
    rng = _rng("join")
    for what, arity, key, rows, probe_arity, probe_key in _join_cases(rng):
        index = IndexClass(arity=arity, key=key)
        index.insert(_batch(rows, arity))
        for m in (0, 1, 15):
            probe = _probe_for(rng, rows, m, probe_arity, key, probe_key)
            _check_join(index, rows, probe, probe_arity, probe_key, f"{what}, {m} probe rows")


def check_len_and_rows(IndexClass: type[IndexBacking]) -> None:
    """len and rows() report the distinct stored rows as an (arity, n) int64 batch."""
    rng = _rng("len")
    for arity, key in [(3, (0,)), (6, (5, 2)), (1, ()), (0, ())]:
        index = IndexClass(arity=arity, key=key)
        _assert_contents(index, [], f"arity={arity}, key={key}, empty")
        model: set[Row] = set()
        for n in (1, 0, 30):
            rows = _unique_rows(rng, n, arity, wide=True)
            index.insert(_batch(rows, arity))
            model |= set(rows)
            _assert_contents(index, model, f"arity={arity}, key={key}, after {len(model)} rows")


def check_delete_then_reinsert(IndexClass: type[IndexBacking]) -> None:
    """Deleting rows (present, absent, repeated) then re-inserting them round-trips."""
    rng = _rng("delete")
    for arity, key in [(3, (2,)), (2, ()), (2, (0, 1))]:
        index = IndexClass(arity=arity, key=key)
        index.delete(_batch([], arity))
        rows = _unique_rows(rng, 40, arity, wide=True)
        index.insert(_batch(rows, arity))
        gone = rows[::3]
        absent = [row for row in _unique_rows(rng, 10, arity) if row not in rows]
        index.delete(_batch(gone + absent + gone[:4], arity))
        kept = [row for row in rows if row not in set(gone)]
        what = f"arity={arity}, key={key}"
        _assert_contents(index, kept, f"{what}, after deleting {len(gone)} rows")
        probe = _probe_for(rng, rows, 15, arity, key, key)
        _check_join(index, kept, probe, arity, key, f"{what}, after delete")
        index.insert(_batch(gone, arity))
        _assert_contents(index, rows, f"{what}, after re-inserting the deleted rows")
        _check_join(index, rows, probe, arity, key, f"{what}, after re-insert")
        index.delete(_batch(rows, arity))
        _assert_contents(index, [], f"{what}, after deleting every row")
        _check_join(index, [], probe, arity, key, f"{what}, after deleting every row")


def _check_range(index: IndexBacking, stored: Iterable[Row], lo: Row, hi: Row, what: str) -> None:
    got = _tuples(index.range(lo, hi), index.arity, f"{what}: {index!r}.range({lo}, {hi})")
    keys = [tuple(row[c] for c in index.key) for row in got]
    assert keys == sorted(keys), f"{what}: range({lo}, {hi}) rows are not in key order: {keys[:8]}"
    expected = sorted(r for r in set(stored) if lo <= tuple(r[c] for c in index.key) <= hi)
    _assert_same(sorted(got), expected, f"{what}: range({lo}, {hi}) vs filter")


def check_range_matches_filter(IndexClass: type[IndexBacking]) -> None:
    """range(lo, hi) returns the rows with lo <= key <= hi (inclusive), in key order."""
    rng = _rng("range")
    for arity, key in [(3, (0,)), (3, (2, 0)), (2, (0, 1)), (2, ()), (1, (0,))]:
        rows = _random_rows(rng, 50, arity, wide=True)
        index = IndexClass(arity=arity, key=key)
        index.insert(_batch(rows, arity))
        keys = [tuple(row[c] for c in key) for row in rows]
        lowest, highest = (int(_INT64.min),) * len(key), (int(_INT64.max),) * len(key)
        bounds = [(lowest, highest), (highest, lowest), (keys[0], keys[0])]
        bounds += [((-1,) * len(key), (2,) * len(key)), ((1,) * len(key), (1,) * len(key))]
        bounds += [tuple(sorted(rng.choice(keys, 2).tolist())) for _ in range(8)]
        for lo, hi in bounds:
            _check_range(index, rows, tuple(lo), tuple(hi), f"arity={arity}, key={key}")
    index = IndexClass(arity=2, key=(0,))
    index.insert(_batch([(7, v) for v in range(20)], 2))
    _check_range(index, [(7, v) for v in range(20)], (7,), (7,), "all-equal keys")


def check_snapshot_isolation(IndexClass: type[IndexBacking]) -> None:
    """A snapshot keeps its rows, len and joins after later writes to the index."""
    rng = _rng("snapshot")
    arity, key = 3, (0,)
    first, second, third = (_unique_rows(rng, 30, arity, wide=True) for _ in range(3))
    index = IndexClass(arity=arity, key=key)
    index.insert(_batch(first, arity))
    versions = [(index.snapshot(), set(first))]
    model = set(first) | set(second)
    index.insert(_batch(second, arity))
    if IndexClass.tags.supports_delete:
        index.delete(_batch(first[::2], arity))
        model -= set(first[::2])
    versions.append((index.snapshot(), set(model)))
    index.insert(_batch(third, arity))
    versions.append((index, model | set(third)))
    probe = _probe_for(rng, first + second + third, 20, arity, key, key)
    for number, (view, expected) in enumerate(versions):
        what = f"version {number} after later writes"
        view._check_invariants()
        _assert_contents(view, expected, what)
        _check_join(view, expected, probe, arity, key, what)


def check_invariants_under_random_operations(IndexClass: type[IndexBacking]) -> None:
    """Random inserts, deletes, joins, ranges and snapshots keep _check_invariants() and the
    contents equal to a Python set."""
    tags = IndexClass.tags
    operations = ["insert", "insert", "join"] + ["delete"] * tags.supports_delete
    operations += ["range"] * tags.ordered + ["snapshot"] * tags.persistent
    rng = _rng("random operations")
    for arity, key, wide in [(3, (1,), False), (2, (), False), (2, (1, 0), True), (1, (0,), True)]:
        index, model, snapshots, log = IndexClass(arity=arity, key=key), set(), [], []
        for _ in range(40):
            operation = str(rng.choice(operations))
            rows = _random_rows(rng, int(rng.integers(0, 9)), arity, wide=wide)
            log.append(f"{operation} {len(rows)}")
            what = f"arity={arity}, key={key}, after [{', '.join(log)}]"
            if operation == "insert":
                index.insert(_batch(rows, arity))
                model |= set(rows)
            elif operation == "delete":
                rows += list(model)[: int(rng.integers(0, 4))]
                index.delete(_batch(rows, arity))
                model -= set(rows)
            elif operation == "join":
                _check_join(index, model, _probe_for(rng, list(model), 6, arity, key, key),
                            arity, key, what)
            elif operation == "range":
                lo, hi = sorted(rng.integers(-1, 5, size=(2, len(key))).tolist())
                _check_range(index, model, tuple(lo), tuple(hi), what)
            else:
                snapshots.append((index.snapshot(), set(model)))
            index._check_invariants()
            _assert_contents(index, model, what)
        for snapshot, expected in snapshots:
            snapshot._check_invariants()
            _assert_contents(snapshot, expected, f"a snapshot, after [{', '.join(log)}]")


def _check_view(index: IndexBacking, stored: Iterable[Row], probe: list[Row], what: str) -> None:
    """The rows ``native_view().lookup`` reaches for each probe key equal the batch join's."""
    view = index.native_view()
    for run in view.runs:
        assert run.data.dtype == np.int64 and (run.data.shape[1] < 2 or run.data.strides[1] == 8), (
            f"{what}: native_view(): a run's data is not int64 with each field's values "
            "contiguous")
    got = sorted((i, row) for i, p in enumerate(probe)
                 for row in _tuples(view.lookup(p), index.arity, f"{what}: view lookup({p})"))
    _assert_same(got, _pairs(index, probe, len(index.key), tuple(range(len(index.key)))),
                 f"{what}: native_view() lookups vs join")
    expected = sorted((i, row) for i, p in enumerate(probe) for row in set(stored)
                      if tuple(row[c] for c in index.key) == p)
    _assert_same(got, expected, f"{what}: native_view() lookups vs the stored rows")


def check_native_view_matches_join(IndexClass: type[IndexBacking]) -> None:
    """The rows reachable through ``native_view()`` for each probe key (read by its reference
    reader, ``NativeView.lookup``) equal the batch join's, after one batch, several batches
    and, where supported, deletes."""
    rng = _rng("native view")
    for arity, key, wide in [(2, (0,), False), (3, (2, 0), True), (2, (1, 0), True),
                             (1, (0,), True), (3, (), False), (4, (3,), False)]:
        index = IndexClass(arity=arity, key=key)
        model: set[Row] = set()
        batches = [_random_rows(rng, n, arity, wide=wide) for n in (30, 0, 5, 12, 40)]
        for number, rows in enumerate(batches):
            index.insert(_batch(rows, arity))
            model |= set(rows)
            probe = [tuple(r[c] for c in key) for r in
                     _probe_for(rng, list(model), 10, arity, key, key)]
            what = f"arity={arity}, key={key}, after {number + 1} batches"
            _check_view(index, model, probe, what)
            if IndexClass.tags.supports_delete and number % 2:
                gone = list(model)[::3]
                index.delete(_batch(gone, arity))
                model -= set(gone)
                _check_view(index, model, probe, f"{what} and a delete")


def check_repr_shows_hyperparameters(IndexClass: type[IndexBacking]) -> None:
    """repr names the class and every constructor parameter with its value."""
    index = IndexClass(arity=3, key=(2, 0))
    text = repr(index)
    assert text.startswith(f"{IndexClass.__name__}("), f"repr {text!r} does not start with the class"
    for needed in ("arity=3", "key=(2, 0)"):
        assert needed in text, f"repr {text!r} lacks {needed!r}"
    parameters = inspect.signature(IndexClass.__init__).parameters.values()
    for parameter in parameters:
        if parameter.name != "self" and parameter.kind not in (parameter.VAR_POSITIONAL,
                                                               parameter.VAR_KEYWORD):
            assert f"{parameter.name}=" in text, f"repr {text!r} lacks hyperparameter {parameter.name!r}"


# -- Running the checks ----------

_CHECKS: tuple[tuple[Check, str | None], ...] = (  # (check, the tag it needs)
    (check_bulk_insert_equals_single_inserts, None),
    (check_duplicates_ignored, None),
    (check_join_matches_nested_loop, None),
    (check_len_and_rows, None),
    (check_delete_then_reinsert, "supports_delete"),
    (check_range_matches_filter, "ordered"),
    (check_snapshot_isolation, "persistent"),
    (check_invariants_under_random_operations, None),
    (check_native_view_matches_join, "native"),
    (check_repr_shows_hyperparameters, None),
)
CHECK_NAMES = tuple(check.__name__ for check, _ in _CHECKS)


def index_checks(IndexClass: type[IndexBacking]) -> Iterator[tuple[str, Check]]:
    """(name, check) for every check that applies to ``IndexClass`` according to its tags."""
    for check, tag in _CHECKS:
        if tag is None or getattr(IndexClass.tags, tag):
            yield check.__name__, check


def _declared_failures(
    IndexClass: type[IndexBacking], expected_failures: Mapping[str, str] | None
) -> dict[str, str]:
    expected = dict(expected_failures or {})
    unknown = sorted(expected.keys() - {name for name, _ in index_checks(IndexClass)})
    if unknown:
        raise ValueError(f"expected_failures names checks that do not apply to "
                         f"{IndexClass.__name__} (tags {IndexClass.tags}): {unknown}; "
                         f"all checks: {list(CHECK_NAMES)}")
    return expected


def check_index(
    IndexClass: type[IndexBacking], expected_failures: Mapping[str, str] | None = None
) -> dict[str, str]:
    """Run every check of ``index_checks(IndexClass)``.

    ``expected_failures``: check name -> reason, for known gaps; such a check must fail, and a
    declared check that passes is an error. Returns check name -> "passed" or "expected failure:
    <reason>". Raises IndexCheckError (an AssertionError) naming every unexpected outcome, chained
    to the first unexpected exception; ValueError if ``expected_failures`` names a check that does
    not apply.
    """
    expected = _declared_failures(IndexClass, expected_failures)
    outcomes, first_error = {}, None
    for name, check in index_checks(IndexClass):
        try:
            check(IndexClass)
        except Exception as error:  # any exception is a failed check
            if name in expected:
                outcomes[name] = f"expected failure: {expected[name]}"
            else:
                outcomes[name] = f"failed: {type(error).__name__}: {error}"
                first_error = first_error or error
        else:
            outcomes[name] = (f"passed but declared failing: {expected[name]}"
                              if name in expected else "passed")
    problems = [f"  {name} {outcomes[name]}" for name in outcomes
                if outcomes[name].startswith(("failed", "passed but"))]
    if problems:
        raise IndexCheckError(f"{IndexClass.__name__} does not conform:\n" + "\n".join(problems),
                              outcomes) from first_error
    return outcomes


def index_check_params(
    IndexClass: type[IndexBacking], expected_failures: Mapping[str, str] | None = None
) -> list:
    """The applicable checks as ``pytest.param(IndexClass, check)`` values with ids
    ``ClassName-check_name``, for ``@pytest.mark.parametrize(("index_class", "check"), ...)``;
    lists for several classes concatenate. Declared failures carry a strict xfail mark with
    their reason. Imports pytest."""
    import pytest

    expected = _declared_failures(IndexClass, expected_failures)
    return [
        pytest.param(IndexClass, check, id=f"{IndexClass.__name__}-{name}",
                     marks=[pytest.mark.xfail(reason=expected[name], strict=True)]
                     if name in expected else [])
        for name, check in index_checks(IndexClass)
    ]
