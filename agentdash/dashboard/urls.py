"""The pages' addresses: each feature's own (the ``urls.py`` of its folder), under one
namespace."""

from django.urls import URLPattern

from agentdash.agent_sessions import ids  # noqa: F401  (registers the session_id converter)
from agentdash.dashboard.breakpoints import urls as breakpoints
from agentdash.dashboard.chat import urls as chat
from agentdash.dashboard.compare import urls as compare
from agentdash.dashboard.confirmations import urls as confirmations
from agentdash.dashboard.evals import urls as evals
from agentdash.dashboard.exports import urls as exports
from agentdash.dashboard.forks import urls as forks
from agentdash.dashboard.guardrails import urls as guardrails
from agentdash.dashboard.instructions import urls as instructions
from agentdash.dashboard.playground import urls as playground
from agentdash.dashboard.queues import urls as queues
from agentdash.dashboard.scores import urls as scores
from agentdash.dashboard.session import urls as session
from agentdash.dashboard.sessions_list import urls as sessions_list
from agentdash.dashboard.tokens import urls as tokens

app_name = "dashboard"

FEATURES = (
    sessions_list,
    chat,
    session,
    confirmations,
    breakpoints,
    forks,
    guardrails,
    instructions,
    playground,
    queues,
    tokens,
    compare,
    evals,
    exports,
    scores,
)

urlpatterns: list[URLPattern] = [pattern for feature in FEATURES for pattern in feature.urlpatterns]
