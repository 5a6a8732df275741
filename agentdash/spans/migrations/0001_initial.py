# The span store began in the former ``timeline`` app (its migration 0001, which also
# created the change log's table, now ``changes.0001_initial``). On a database migrated
# before the move, ``replaces`` marks this one applied (Django records a replacing migration
# under the names it replaces, on new databases too, until ``replaces`` is removed); 0002
# renames the table.

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):
    initial = True

    replaces = [("timeline", "0001_initial")]

    dependencies = [
        ("agent_sessions", "0001_initial"),
        ("runs", "0001_initial"),
    ]

    operations = [
        migrations.CreateModel(
            name="Span",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("trace_id", models.CharField(max_length=32)),
                ("span_id", models.CharField(max_length=16)),
                ("parent_span_id", models.CharField(blank=True, max_length=16)),
                ("name", models.CharField(max_length=255)),
                ("kind", models.CharField(default="internal", max_length=16)),
                ("start_time", models.BigIntegerField(help_text="Unix time in nanoseconds.")),
                ("end_time", models.BigIntegerField(blank=True, null=True)),
                (
                    "status",
                    models.CharField(
                        choices=[("unset", "Unset"), ("ok", "Ok"), ("error", "Error")],
                        default="unset",
                        max_length=8,
                    ),
                ),
                ("status_message", models.TextField(blank=True)),
                ("attributes", models.JSONField(blank=True, default=dict)),
                ("events", models.JSONField(blank=True, default=list)),
                (
                    "seq",
                    models.PositiveBigIntegerField(
                        default=0, help_text="The session change that last wrote this span."
                    ),
                ),
                (
                    "run",
                    models.ForeignKey(
                        blank=True,
                        null=True,
                        on_delete=django.db.models.deletion.SET_NULL,
                        related_name="spans",
                        to="runs.run",
                    ),
                ),
                (
                    "session",
                    models.ForeignKey(
                        blank=True,
                        null=True,
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="spans",
                        to="agent_sessions.agentsession",
                    ),
                ),
            ],
            options={
                "db_table": "timeline_span",
                "indexes": [
                    models.Index(
                        fields=["trace_id", "start_time"], name="timeline_sp_trace_i_c34f1b_idx"
                    ),
                    models.Index(fields=["session", "seq"], name="timeline_sp_session_fd0849_idx"),
                    models.Index(fields=["run"], name="timeline_sp_run_id_eda06e_idx"),
                ],
                "constraints": [
                    models.UniqueConstraint(fields=("trace_id", "span_id"), name="span_identity")
                ],
            },
        ),
    ]
