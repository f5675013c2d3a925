"""The native executor: rule plans run as fused nested loops in kernels compiled ahead of time.

``encoding`` lowers a translator plan to the interpreter's arrays (``layout`` gives their
integers), ``kernels`` holds the interpreter, ``tables`` the relations and hash indexes it
reads and grows, ``views`` its probes of an IndexBacking's native view, ``operators`` its arithmetic and ``memory`` raw loads, stores and atomics, all
numba source; ``build`` compiles them into an extension module and
``compiled`` loads it (building it once per version), ``store`` owns relations and indexes and
grows them when a kernel asks, and ``evaluator`` is the ``native`` RuleEvaluator that runs
whole semi-naive strata natively.
"""
