"""Shared settings: hypothesis runs derandomized (the same examples on every run), so a
failure reproduces; `HYPOTHESIS_PROFILE=long` runs more examples, still derandomized."""

import os
from pathlib import Path

from hypothesis import HealthCheck, settings

for profile, examples in (("ci", 60), ("long", 1000)):
    settings.register_profile(
        profile,
        derandomize=True,
        max_examples=examples,
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow],
    )
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))

# The checkout's root: the JVM and Parquet fixtures live in other crates' test data.
ROOT = Path(__file__).resolve().parents[3]
