"""Suite-wide settings: hypothesis runs derandomized, so every run tries the same examples."""

from __future__ import annotations

from hypothesis import settings

settings.register_profile("terrarium", derandomize=True, print_blob=True)
settings.load_profile("terrarium")
