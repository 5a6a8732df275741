from django.apps import AppConfig


class RemoteConfig(AppConfig):
    name = "agentdash.remote"
    label = "remote"
    verbose_name = "Remote agents"
    default_auto_field = "django.db.models.BigAutoField"
