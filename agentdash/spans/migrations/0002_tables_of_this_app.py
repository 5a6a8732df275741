# The table and its indexes take this app's name (they kept the former ``timeline`` app's),
# and the content type moves here with the permissions given on it.

from django.db import migrations

from agentdash.core.migration_ops import content_types_moved


class Migration(migrations.Migration):
    dependencies = [
        ("spans", "0001_initial"),
        ("contenttypes", "0002_remove_content_type_name"),
    ]

    operations = [
        migrations.AlterModelTable(name="span", table=None),
        migrations.RenameIndex(
            model_name="span",
            new_name="spans_span_trace_i_3b50b1_idx",
            old_name="timeline_sp_trace_i_c34f1b_idx",
        ),
        migrations.RenameIndex(
            model_name="span",
            new_name="spans_span_session_bd6d23_idx",
            old_name="timeline_sp_session_fd0849_idx",
        ),
        migrations.RenameIndex(
            model_name="span",
            new_name="spans_span_run_id_7f8914_idx",
            old_name="timeline_sp_run_id_eda06e_idx",
        ),
        content_types_moved(old_app="timeline", new_app="spans", models=["span"]),
    ]
