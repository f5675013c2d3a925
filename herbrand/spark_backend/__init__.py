"""The Spark backend: the relational-algebra plans of ``herbrand.translators`` run as PySpark
DataFrame operations, with semi-naive iteration driven from the driver.

Only this package imports pyspark, and nothing imports it until the ``spark`` backend is looked
up in ``herbrand.framework.registry.BACKENDS`` (``import herbrand`` works without Java).

    session.py      starting or reusing a SparkSession; the SQL settings a run needs
    expressions.py  plan expressions and comparisons as Spark Columns (exact int64 semantics)
    plans.py        one plan -> one DataFrame (joins, left-anti joins, groupBy, unions)
    frames.py       herbrand Relations <-> typed DataFrames (columns c0..c{k-1})
    files.py        .input relations read by Spark, .output relations written by Spark
    fixpoint.py     strata in order, semi-naive iteration, checkpoints, progress
    partitions.py   the layout of recursive relations during the passes; a pass's new rows
    decomposed_strata.py  which strata run as one decomposed job, and those jobs over a run
    decomposed.py   one such job: the native engine to fixpoint in each partition
    driver_strata.py      small strata on the driver, by the native engine
    backend.py      SparkBackend: the Backend contract, and files in / files out
"""
