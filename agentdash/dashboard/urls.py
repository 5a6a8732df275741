from django.urls import path

from agentdash.agent_sessions import ids  # noqa: F401  (registers the session_id converter)
from agentdash.dashboard import (
    breakpoint_views,
    compare_views,
    confirmation_views,
    data_views,
    eval_views,
    export_views,
    fork_views,
    guardrail_views,
    views,
)

app_name = "dashboard"

urlpatterns = [
    path("", views.home, name="home"),
    path("session-rows/", data_views.session_rows, name="session_rows"),  # the list, kept current
    path("chat/", views.chat_new, name="chat_new"),  # New chat: ?agent=<name>
    path("sessions/", views.session_new, name="session_new"),  # a chat's first message
    path("sessions/<session_id:session_id>/", views.session_detail, name="session"),
    path("sessions/<session_id:session_id>/rename/", views.session_rename, name="session_rename"),
    path("sessions/<session_id:session_id>/delete/", views.session_delete, name="session_delete"),
    path(
        "sessions/<session_id:session_id>/snapshot/",
        data_views.session_snapshot,
        name="session_snapshot",
    ),
    path("sessions/<session_id:session_id>/spans/", data_views.session_spans, name="session_spans"),
    path(
        "sessions/<session_id:session_id>/spans/plan/",
        data_views.session_spans_plan,
        name="session_spans_plan",
    ),
    path(
        "sessions/<session_id:session_id>/spans/search/",
        data_views.session_span_search,
        name="session_span_search",
    ),
    path(
        "sessions/<session_id:session_id>/spans/<str:trace_id>/<str:span_id>/",
        data_views.session_span,
        name="session_span",
    ),
    path(
        "sessions/<session_id:session_id>/events/",
        data_views.session_events,
        name="session_events",
    ),
    # Tool confirmations: what a session waits on, and a person's answer (docs/RUNTIME.md).
    path(
        "sessions/<session_id:session_id>/confirmations/",
        confirmation_views.session_confirmations,
        name="session_confirmations",
    ),
    path(
        "sessions/<session_id:session_id>/confirmations/<str:request_id>/",
        confirmation_views.confirmation_answer_view,
        name="confirmation_answer",
    ),
    path("waiting/", confirmation_views.waiting_runs, name="waiting_runs"),  # operators
    path(
        "sessions/<session_id:session_id>/breakpoints/",
        breakpoint_views.session_breakpoints,
        name="session_breakpoints",
    ),
    # Fork from an event, replay a fork (docs/PROTOCOL.md, "Forks and replays").
    path(
        "sessions/<session_id:session_id>/fork/",
        fork_views.session_fork_view,
        name="session_fork",
    ),
    path(
        "sessions/<session_id:session_id>/replay/",
        fork_views.session_replay_view,
        name="session_replay",
    ),
    # What the guardrails decided, and the policies they follow (docs/SAFETY.md).
    path(
        "sessions/<session_id:session_id>/guardrails/",
        guardrail_views.session_guardrails,
        name="session_guardrails",
    ),
    path(
        "agents/<str:agent_name>/guardrails/",
        guardrail_views.agent_guardrails,
        name="agent_guardrails",
    ),
    path("policies/<int:policy_id>/", guardrail_views.policy_edit, name="policy_edit"),
    # Two sessions or runs side by side: ?a=<id>&b=<id>[&a_run=<run>&b_run=<run>]
    # (agentdash/dashboard/compare_views.py, docs/ARCHITECTURE.md "Compare").
    path("compare/", compare_views.compare, name="compare"),
    # Eval sets in ADK's format, a session kept as a case, runs of a set (docs/EVAL.md).
    path(
        "sessions/<session_id:session_id>/evalcase/",
        eval_views.session_eval_case,
        name="session_eval_case",
    ),
    path("evals/", eval_views.evals_list, name="evals"),
    path("evals/<int:pk>/", eval_views.eval_set_detail, name="eval_set"),
    path("evals/<int:pk>/download/", eval_views.eval_set_download, name="eval_set_download"),
    path("evals/<int:pk>/run/", eval_views.eval_set_run, name="eval_set_run"),
    path("evals/runs/<int:pk>/", eval_views.eval_run_detail, name="eval_run"),
    # Downloads (docs/EXPORT.md): the session document, its spans as OTLP/JSON, one trace.
    path(
        "sessions/<session_id:session_id>/export/session/",
        export_views.session_export,
        name="session_export",
    ),
    path(
        "sessions/<session_id:session_id>/export/otlp/",
        export_views.session_export_otlp,
        name="session_export_otlp",
    ),
    path(
        "sessions/<session_id:session_id>/export/otlp/<str:trace_id>/",
        export_views.session_export_trace,
        name="session_export_trace",
    ),
]
