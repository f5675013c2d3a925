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
    backend.py      SparkBackend: the Backend contract, and files in / files out
"""
