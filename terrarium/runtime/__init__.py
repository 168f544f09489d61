"""Wiring, supervision and recording of a running team; ``TeamRuntime`` is the facade."""
