"""The agent the worker-process tests run (``AGENTDASH_AGENTS`` names it): it looks a topic
up with the gated tool of :mod:`tests.agentdash.runs.celery_agents` (a test holds a run in
it by creating the file ``hold`` in ``AGENTDASH_TEST_GATE_DIR``), and has one callback an
operator can switch off, ``note_checked`` (after every model call)."""

from __future__ import annotations

from runtime import Agent, CallbackContext, LlmResponse
from tests.agentdash.runs.celery_agents import look_up_topic

AGENT_NAME = "checked_agent"
CALLBACK = "note_checked"


def note_checked(callback_context: CallbackContext, llm_response: LlmResponse) -> None:
    """Lets every answer through: what the tests look at is whether it ran."""
    return None


root_agent = Agent(
    name=AGENT_NAME,
    model="offline",
    description="Looks topics up in the library.",
    instruction="Look the topic up with the look_up_topic tool, then answer in one sentence.",
    tools=[look_up_topic],
    after_model_callback=note_checked,
    output_key="answer",
)
