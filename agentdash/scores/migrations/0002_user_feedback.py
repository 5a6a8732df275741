"""The chat's thumbs up and down: a yes/no score definition of their own (operators may turn
it off, and the chat then shows none)."""

from typing import Any

from django.db import migrations


def feedback_make(apps: Any, schema_editor: Any) -> None:
    definitions = apps.get_model("scores", "ScoreDefinition")
    definitions.objects.get_or_create(
        name="user_feedback",
        defaults={
            "kind": "boolean",
            "description": "The chat's thumbs on an answer: up (yes) or down (no), with an "
            "optional comment.",
        },
    )


class Migration(migrations.Migration):
    dependencies = [("scores", "0001_scores")]

    operations = [migrations.RunPython(feedback_make, migrations.RunPython.noop)]
