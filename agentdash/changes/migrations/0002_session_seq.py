# Formerly ``timeline.0002_session_seq`` (see 0001).

import django.db.models.deletion
from django.db import migrations, models


def fill_counters(apps, schema_editor):
    """Each session with changes starts its counter at its highest seq."""
    SessionChange = apps.get_model("changes", "SessionChange")
    SessionSeq = apps.get_model("changes", "SessionSeq")
    tops = SessionChange.objects.values("session_id").annotate(top=models.Max("seq"))
    SessionSeq.objects.bulk_create(
        [SessionSeq(session_id=row["session_id"], last_seq=row["top"]) for row in tops],
        batch_size=500,
    )


class Migration(migrations.Migration):
    replaces = [("timeline", "0002_session_seq")]

    dependencies = [
        ("agent_sessions", "0001_initial"),
        ("changes", "0001_initial"),
    ]

    operations = [
        migrations.CreateModel(
            name="SessionSeq",
            fields=[
                (
                    "session",
                    models.OneToOneField(
                        on_delete=django.db.models.deletion.CASCADE,
                        primary_key=True,
                        related_name="+",
                        serialize=False,
                        to="agent_sessions.agentsession",
                    ),
                ),
                ("last_seq", models.PositiveBigIntegerField(default=0)),
            ],
            options={"db_table": "timeline_sessionseq"},
        ),
        migrations.RunPython(fill_counters, migrations.RunPython.noop),
    ]
