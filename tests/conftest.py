"""Hypothesis profiles.

``ci`` (the default) keeps the fuzzing harness (tests/test_fuzz_cli.py) at a few dozen hostile inputs per
reader and subcommand; ``--hypothesis-profile=long`` runs thousands (see README, "Fuzzing").  Other tests
set their own ``max_examples`` and are not affected.
"""

from hypothesis import HealthCheck, settings

settings.register_profile("ci", settings.get_profile("default"))
settings.register_profile("long", max_examples=3000, deadline=None,
                          suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
settings.load_profile("ci")
