"""Agents the registry tests load by dotted path (not a test module)."""

from __future__ import annotations

from runtime import Agent, Callback, Context, SequentialAgent, named


def guard(callback_context, llm_request):  # type: ignore[no-untyped-def]
    return None


@named("audit-trail")
def audit(callback_context):  # type: ignore[no-untyped-def]
    return None


class CountCalls(Callback):
    def before_llm_call(self, context: Context, *args: object, **kwargs: object) -> Context:
        return context


def lookup(term: str) -> str:
    """Looks a term up."""
    return term


root_agent = Agent(
    name="alpha",
    model="offline",
    description="The first sample.",
    tools=[lookup],
    before_model_callback=[guard],
    callbacks=[CountCalls()],
)

beta = SequentialAgent(
    name="beta",
    description="A pipeline.",
    before_agent_callback=audit,
    callbacks=[],
    sub_agents=[Agent(name="beta_step", model="offline", callbacks=[])],
)

alpha_again = Agent(name="alpha", model="offline")

not_an_agent = {"name": "gamma"}
