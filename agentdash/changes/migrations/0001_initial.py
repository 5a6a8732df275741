# The change log began in the former ``timeline`` app (its migration 0001, which also
# created the span store's table, now ``spans.0001_initial``). On a database migrated before
# the move, ``replaces`` marks this one applied (Django records a replacing migration under
# the names it replaces, on new databases too, until ``replaces`` is removed); 0004 renames
# the tables.

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):
    initial = True

    replaces = [("timeline", "0001_initial")]

    dependencies = [
        ("agent_sessions", "0001_initial"),
    ]

    operations = [
        migrations.CreateModel(
            name="SessionChange",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("seq", models.PositiveBigIntegerField()),
                (
                    "kind",
                    models.CharField(
                        choices=[
                            ("event", "Event"),
                            ("span", "Span"),
                            ("state", "State"),
                            ("run", "Run"),
                        ],
                        max_length=8,
                    ),
                ),
                (
                    "ref",
                    models.CharField(
                        help_text="Event id, trace:span id or run id.", max_length=128
                    ),
                ),
                ("at", models.DateTimeField(auto_now_add=True)),
                (
                    "session",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="changes",
                        to="agent_sessions.agentsession",
                    ),
                ),
            ],
            options={
                "db_table": "timeline_sessionchange",
                "ordering": ["session", "seq"],
                "constraints": [
                    models.UniqueConstraint(fields=("session", "seq"), name="change_seq_unique")
                ],
            },
        ),
    ]
