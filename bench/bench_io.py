"""Reading facts and writing outputs: the issue's "100 MB/s or more" as throughput figures.

One million rows of three columns (numbers, or numbers and symbols), written once as a facts
file. ``test_read`` times ``io.read_facts`` on the pyarrow path and on the exact one;
``test_write`` times formatting and writing the same relation in Soufflé's layout on one and
two threads (``relation_chunks``). ``extra_info["mb_per_s"]`` is the file's size over the
fastest round. With ``--benchmark-disable`` (``make test``) the file has ``SMOKE_ROWS`` rows and
each function runs once, checking that the bytes read back are the rows written.
"""

from __future__ import annotations

import numpy as np
import pytest

from herbrand.framework import io
from herbrand.framework.csv_writer import relation_chunks, write_chunks
from herbrand.framework.symbols import SymbolTable

ROWS = 1_000_000
SMOKE_ROWS = 2_000
SHAPES = {"numbers": ("number", "number", "number"), "symbols": ("number", "symbol", "symbol")}


def _facts(tmp_path_factory, shape: str, rows: int):
    """(path, types, the distinct rows as a Relation over a SymbolTable, the table)."""
    types = SHAPES[shape]
    rng = np.random.default_rng(0)
    values = rng.integers(0, 50_000, size=(rows, len(types)))
    lines = ["\t".join(str(v) if t == "number" else f"name{v}" for v, t in zip(row, types,
                                                                             strict=True))
             for row in values.tolist()]
    path = tmp_path_factory.mktemp("io") / f"{shape}.facts"
    path.write_text("\n".join(lines) + "\n")
    symbols = SymbolTable()
    return path, types, io.read_facts(path, types, symbols), symbols


@pytest.mark.parametrize("reader", ["arrow", "exact"])
@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_read(benchmark, tmp_path_factory, monkeypatch, shape, reader):
    rows = SMOKE_ROWS if benchmark.disabled else ROWS
    path, types, expected, _ = _facts(tmp_path_factory, shape, rows)
    monkeypatch.setattr(io, "ARROW", reader == "arrow")
    benchmark.group = f"read-{shape}"
    benchmark.name = reader
    relation = benchmark.pedantic(lambda: io.read_facts(path, types, SymbolTable()),
                                  rounds=1 if benchmark.disabled else 3, iterations=1)
    _throughput(benchmark, path.stat().st_size)
    assert len(relation) == len(expected) and relation.arity == len(types)


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_write(benchmark, tmp_path_factory, shape, threads):
    rows = SMOKE_ROWS if benchmark.disabled else ROWS
    path, types, relation, symbols = _facts(tmp_path_factory, shape, rows)
    out = path.with_suffix(".csv")
    benchmark.group = f"write-{shape}"
    benchmark.name = f"{threads}-thread"
    benchmark.pedantic(lambda: write_chunks(out, relation_chunks(relation, types, symbols,
                                                                 threads=threads)),
                       rounds=1 if benchmark.disabled else 3, iterations=1)
    _throughput(benchmark, out.stat().st_size)
    assert io.read_facts(out, types, symbols) == relation


def _throughput(benchmark, size: int) -> None:
    benchmark.extra_info["bytes"] = size
    if benchmark.enabled:
        benchmark.extra_info["mb_per_s"] = round(size / 1e6 / benchmark.stats.stats.min, 1)
