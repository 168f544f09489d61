"""Suite-wide settings: hypothesis runs derandomized, so every run tries the same examples;
saved prompt prefixes go to a fresh folder per session, so no test restores what an earlier
session (or the user's own runs) left in ``~/.cache/terrarium``."""

from __future__ import annotations

import os
import tempfile

from hypothesis import settings

os.environ["TERRARIUM_CACHE_DIR"] = tempfile.mkdtemp(prefix="terrarium-test-cache-")

settings.register_profile("terrarium", derandomize=True, print_blob=True)
settings.load_profile("terrarium")
