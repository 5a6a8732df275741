from __future__ import annotations

import os
import subprocess
import sys

import pytest

pytestmark = pytest.mark.slow  # each test starts a Python of its own: ~2 s


def run_cli(*args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("GOOGLE_API_KEY", "GEMINI_API_KEY")}
    return subprocess.run(
        [sys.executable, "-m", "runtime", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
        check=False,
    )


def test_chat_with_trace_prints_spans_as_they_start_and_the_answer() -> None:
    out = run_cli(
        "chat", "runtime.examples.capital", "--trace", "-m", "What is the capital of France?"
    )
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    starts = [line.strip() for line in lines if line.strip().startswith("▸")]
    assert starts[:4] == [
        "▸ invocation capital_agent",
        "▸ invoke_agent capital_agent",
        "▸ generate_content offline",
        "▸ callback block_keyword_guardrail",
    ]
    assert "▸ execute_tool get_capital_city" in starts
    assert "▸ callback redirect_canada" in starts
    assert "[capital_agent] calls get_capital_city({'country': 'France'})" in lines
    assert lines[-1].startswith(
        '[capital_agent] Offline model: `get_capital_city(country="France")` returned Paris.'
    )


def test_chat_reports_a_bad_agent_path() -> None:
    out = run_cli("chat", "runtime.examples.capital:nothing_here", "-m", "hi")
    assert out.returncode != 0
    assert "is not an agent" in out.stderr


@pytest.mark.parametrize("message", ["BLOCK me", "<script>alert(1)</script>"])
def test_chat_without_trace_prints_only_the_conversation(message: str) -> None:
    out = run_cli("chat", "runtime.examples.capital", "-m", message)
    assert out.returncode == 0, out.stderr
    assert "▸" not in out.stdout
    assert out.stdout.startswith("[capital_agent] ")
