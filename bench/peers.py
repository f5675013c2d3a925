"""The peers herbrand is measured against, run in this process on the same facts.

- clingo: ground the workload's ASP rules over the facts (given as ASP text) and count the atoms
  of the output predicate. Grounding a stratified positive program computes its least model, so
  the count equals herbrand's; clingo is single-threaded.
- DuckDB: the workload's recursive CTE (``UNION``: set semantics) over the facts, registered as
  tables ``<relation>(c0, c1, ...)`` without a copy; ``threads`` caps DuckDB's worker threads.

Each function's time includes what the peer must do with the facts (clingo parses the text;
DuckDB scans the registered frames), as herbrand's times include encoding its numpy facts.
clingo is counted by ``herbrand.comparison.peer_process.clingo_count``, shared with the
whole-process peers (where DuckDB reads the facts files itself). numpy and pandas are imported
only by the functions that take arrays.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np


def asp_facts(facts: dict[str, np.ndarray]) -> str:
    """The facts as ASP text, one ``relation(v1, ..., vk).`` per row. O(rows), once per run."""
    import numpy as np

    lines = []
    for name, rows in facts.items():
        lines += [f"{name}({','.join(map(str, row))})." for row in np.asarray(rows).tolist()]
    return "\n".join(lines)


def duckdb_count(sql: str, facts: dict[str, np.ndarray], threads: int) -> int:
    """The single count returned by ``sql`` over the facts registered as tables."""
    import duckdb
    import numpy as np
    import pandas

    connection = duckdb.connect(config={"threads": threads})
    try:
        for name, rows in facts.items():
            rows = np.asarray(rows)
            frame = pandas.DataFrame({f"c{i}": rows[:, i] for i in range(rows.shape[1])})
            connection.register(name, frame)
        return connection.execute(sql).fetchone()[0]
    finally:
        connection.close()
