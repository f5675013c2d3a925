"""``herbrand compare``: one program run in many configurations, each as a user meets it.

- ``configurations``: the configuration syntax (``native``, ``relational/btree``,
  ``native@parallel:2``, ``spark:local[2]``, ``souffle``, ...) and the grid of the command line.
- ``processes``: one child process, its wall time and peak RSS (through ``launch.py``), under a
  timeout and a memory limit.
- ``outputs``: what a run wrote (sizes and order-independent digests) and whether two agree.
- ``souffle``: Soufflé's version and its compiled binaries, cached.
- ``peer_process``: DuckDB and clingo as processes of their own.
- ``warm``: in-process seconds of ``herbrand.materialize``, as a child process.
- ``measure``: one configuration measured: repeated whole runs, checked, and warm seconds.
- ``runner``: every configuration of a comparison, the agreement between them and COST.

The tables, charts and COST lines are drawn by ``herbrand.reports``. ``bench/`` measures its
side-by-side table with the same modules.
"""
