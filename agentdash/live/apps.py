"""The live session socket and the pipeline that publishes every change to it."""

from django.apps import AppConfig


class LiveConfig(AppConfig):
    name = "agentdash.live"
    label = "live"
    verbose_name = "Live"

    def ready(self) -> None:
        from agentdash.changes.announcements import announcer_register
        from agentdash.live import checks  # noqa: F401  (registers the system checks)
        from agentdash.live.pipeline import notify_threadsafe
        from agentdash.live.run_stream import PipelineRunStream
        from agentdash.runs.streaming import run_stream_register

        # The apps below never import this one: they are told where to send, here.
        announcer_register(notify_threadsafe)
        run_stream_register(PipelineRunStream())
