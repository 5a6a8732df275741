"""Eval sets in ADK's format, a session kept as a case, runs of a set (docs/EVAL.md)."""

from django.urls import path

from agentdash.dashboard.evals import views

urlpatterns = [
    path(
        "sessions/<session_id:session_id>/evalcase/",
        views.session_eval_case,
        name="session_eval_case",
    ),
    path("evals/", views.evals_list, name="evals"),
    path("evals/<int:pk>/", views.eval_set_detail, name="eval_set"),
    path("evals/<int:pk>/download/", views.eval_set_download, name="eval_set_download"),
    path("evals/<int:pk>/run/", views.eval_set_run, name="eval_set_run"),
    path("evals/runs/<int:pk>/", views.eval_run_detail, name="eval_run"),
]
