"""Eval sets in ADK's format, and their runs against the agents configured now."""

from django.apps import AppConfig


class EvalsConfig(AppConfig):
    name = "agentdash.evals"
    label = "evals"
    verbose_name = "Evals"

    def ready(self) -> None:
        # Eval runs execute in a thread of the process that started them: every reaper pass
        # takes up those whose process stopped.
        from agentdash.evals.runner import eval_runs_reap
        from agentdash.runs.reaper import reap_hook_add

        reap_hook_add(eval_runs_reap)
