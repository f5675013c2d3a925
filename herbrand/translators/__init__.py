"""Datalog to relational algebra: the plan IR, the rewrite passes and the pipeline.

Map of the package: ``ir`` (plan nodes, expressions, walk/transform); ``pending`` (the node of
a rule part-way through lowering); one module per pass, ``body_to_products`` ...
``selection_pushdown``; ``pipeline`` (``translate_rule``, ``translate_program``,
``DEFAULT_PASSES``, ``format_plan``, ``explain_program``); ``encode_symbols`` (symbol constants
to a SymbolTable's ids); ``interpreter`` (a reference interpreter of plans over Python sets).
Program rewrites: ``sips`` (bound arguments, left to right), ``magic_sets`` (the magic-sets
transformation for goals), ``magic_pragma`` (``.pragma "magic-transform"``).
"""

from herbrand.translators.ir import Plan, TranslationError
from herbrand.translators.pipeline import (
    DEFAULT_PASSES,
    explain_program,
    format_plan,
    translate_program,
    translate_rule,
)

__all__ = [
    "DEFAULT_PASSES",
    "Plan",
    "TranslationError",
    "explain_program",
    "format_plan",
    "translate_program",
    "translate_rule",
]
