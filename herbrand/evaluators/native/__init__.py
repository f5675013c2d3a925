"""The native executor: rule plans run as fused nested loops in numba kernels.

``encoding`` lowers a translator plan to the interpreter's arrays, ``kernels`` holds the
interpreter and the growing storage it reads (hash indexes, dedup tables), ``store`` names
relations and indexes, and ``evaluator`` is the ``native`` RuleEvaluator that runs whole
semi-naive strata natively.
"""
