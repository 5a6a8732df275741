# Formerly ``timeline.0003_change_kinds`` (see 0001).

from django.db import migrations, models


class Migration(migrations.Migration):
    replaces = [("timeline", "0003_change_kinds")]

    dependencies = [
        ("changes", "0002_session_seq"),
    ]

    operations = [
        migrations.AlterField(
            model_name="sessionchange",
            name="kind",
            field=models.CharField(
                choices=[("event", "Event"), ("span", "Span"), ("run", "Run")], max_length=8
            ),
        ),
    ]
