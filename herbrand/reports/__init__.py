"""Reports: tables, charts and COST, shared by ``bench/`` and ``herbrand compare``.

- ``benchmarks``: ``herbrand bench report``, the markdown report of pytest-benchmark JSON.
- ``charts``: PNG bar charts of times per configuration.
- ``cost``: COST, the configuration that outperforms a single thread, and its charts.
- ``incremental``: the epoch and memory sections of the benchmark report.
- ``machine``: the description of the machine a measurement ran on.
- ``comparison``: the table, CSV and JSON of ``herbrand compare``.

matplotlib (the ``bench`` extra) is imported only by the functions that draw.
"""
