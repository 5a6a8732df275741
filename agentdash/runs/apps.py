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
        from agentdash.runs.change_items import run_latest_change, runs_load
        from agentdash.runs.health import health_record_forever
        from agentdash.runs.host import run_host
        from agentdash.runs.lifecycle import run_ended_register
        from agentdash.runs.reaper import reap_forever
        from agentdash.runs.replays import replay_continue
        from agentdash.runs.services import turn_next
        from agentdash.runs.supervisor import Backoff

        item_kind_register(SessionChange.Kind.RUN, load=runs_load, latest=run_latest_change)
        # A replay queues its next message when a run ends (lifecycle cannot import it).
        run_ended_register(replay_continue)
        # A session's runs take turns: the next queued one starts when one ends.
        run_ended_register(turn_next)
        host = run_host()
        # Where runs execute: the switches reach their callbacks. Restarted within 5 s at
        # most: it is the path of an operator's switch to running agents.
        host.service_register(
            "agentdash.control-listener",
            lambda h: run_control_listener(h.switchboard),
            backoff=Backoff(most=5.0),
        )
        # Every process that serves or executes runs reaps (so runs are taken up again even
        # when every worker died), and records its services' health.
        host.service_register("agentdash.reaper", lambda h: reap_forever(), runs_only=False)
        host.service_register("agentdash.health", health_record_forever, runs_only=False)
