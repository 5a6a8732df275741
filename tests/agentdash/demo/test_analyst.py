"""The analyst: numbers in, Python run in the sandbox, the figures out (offline model)."""

from __future__ import annotations

import pytest

from agentdash.demo import analyst

# The guardrails read their policies from the database (none here: no limits apply).
pytestmark = pytest.mark.django_db(transaction=True)


def test_the_analyst_computes_in_the_sandbox(chat) -> None:  # type: ignore[no-untyped-def]
    turn = chat(analyst.root_agent).send("What is the mean of 4, 8, 15, 16, 23 and 42?")
    ((author, tool, args),) = turn.calls
    assert (author, tool) == ("analyst", "run_python")
    assert "numbers = [4.0, 8.0, 15.0, 16.0, 23.0, 42.0]" in args["code"]
    (result,) = turn.results
    assert result["exit_code"] == 0 and "mean: 18\n" in result["stdout"]
    assert "median: 15.5" in turn.answer


def test_the_analyst_says_when_no_numbers_were_given(chat) -> None:  # type: ignore[no-untyped-def]
    turn = chat(analyst.root_agent).send("Compute the average of nothing, please")
    assert turn.results[0]["stdout"] == "No numbers were given.\n"
