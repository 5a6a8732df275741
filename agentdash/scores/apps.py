"""Scores: what people, end users, evaluators and scripts say of a session, a run or a span —
against score definitions operators keep (docs/SCORES.md)."""

from django.apps import AppConfig


class ScoresConfig(AppConfig):
    name = "agentdash.scores"
    label = "scores"
    verbose_name = "Scores"

    def ready(self) -> None:
        from agentdash.changes.items import item_kind_register
        from agentdash.changes.models import SessionChange
        from agentdash.scores.selectors import scores_load

        item_kind_register(SessionChange.Kind.SCORE, load=scores_load)

        from agentdash.runs.after_run import after_run_register
        from agentdash.scores.online import run_and_rules, run_evaluate

        # The online evaluators, after each run; the rules that take it read where its end is.
        after_run_register(run_evaluate, look=run_and_rules)
