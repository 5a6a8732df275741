"""The runs fixtures (agents registered for a test, the run host on the test's loop), for the
tests that copy a real run's spans to a collector (``test_otlp_out.py``)."""

from __future__ import annotations

from tests.agentdash.runs.conftest import (  # noqa: F401  (fixtures)
    inline,
    register,
)
