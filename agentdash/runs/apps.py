"""One agent invocation each: its lifecycle and outcome."""

from django.apps import AppConfig


class RunsConfig(AppConfig):
    name = "agentdash.runs"
    label = "runs"
    verbose_name = "Runs"

    def ready(self) -> None:
        from agentdash.changes.items import item_kind_register
        from agentdash.changes.models import SessionChange
        from agentdash.controls.switch_broadcast import run_control_listener
        from agentdash.runs import checks  # noqa: F401  (registers the system checks)
        from agentdash.runs.change_items import runs_load
        from agentdash.runs.host import run_host
        from agentdash.runs.reaper import reap_forever

        item_kind_register(SessionChange.Kind.RUN, load=runs_load)
        # What every process that executes runs keeps going beside them.
        host = run_host()
        host.service_register(
            "agentdash.control-listener", lambda h: run_control_listener(h.switchboard)
        )
        host.service_register("agentdash.reaper", lambda h: reap_forever())
