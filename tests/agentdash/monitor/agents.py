"""The agent the alert tests run: it fails while ``FLAKY.failing`` is set (its
``before_model`` callback raises), and answers once it is not."""

from __future__ import annotations

from dataclasses import dataclass

from runtime import CallbackContext, LlmAgent, LlmRequest, ScriptedLlm


@dataclass
class Flaky:
    failing: bool = True


FLAKY = Flaky()


def _upstream(callback_context: CallbackContext, llm_request: LlmRequest) -> None:
    if FLAKY.failing:
        raise ConnectionError("the upstream service is down")


flaky_agent = LlmAgent(
    name="flaky_agent",
    model=ScriptedLlm(responses=["Fine."] * 50),
    before_model_callback=_upstream,
)
