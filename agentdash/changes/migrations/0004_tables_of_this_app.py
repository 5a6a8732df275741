# The tables take this app's name (they kept the former ``timeline`` app's), and the content
# types move here with the permissions given on them.

from django.db import migrations

from agentdash.core.migration_ops import content_types_moved


class Migration(migrations.Migration):
    dependencies = [
        ("changes", "0003_change_kinds"),
        ("contenttypes", "0002_remove_content_type_name"),
    ]

    operations = [
        migrations.AlterModelTable(name="sessionchange", table=None),
        migrations.AlterModelTable(name="sessionseq", table=None),
        content_types_moved(
            old_app="timeline", new_app="changes", models=["sessionchange", "sessionseq"]
        ),
    ]
