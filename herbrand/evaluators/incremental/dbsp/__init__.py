"""The ``dbsp`` engine: Z-sets, lifted operators, a per-stratum circuit and the engine."""
