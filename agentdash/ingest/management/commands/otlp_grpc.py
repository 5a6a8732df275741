"""``manage.py otlp_grpc [--address HOST:PORT] [--workers N]``: serve OTLP/gRPC from a process
of its own (at scale: the server processes then set ``AGENTDASH_OTLP_GRPC=off``). Runs until
stopped (SIGTERM or Ctrl-C), finishing the exports under way for up to 5 s."""

from __future__ import annotations

import signal
import threading
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from agentdash.core.conf import agentdash_setting
from agentdash.ingest.grpc_server import grpc_server_start

GRACE_S = 5.0


class Command(BaseCommand):
    help = "Serve OTLP/gRPC (the TraceService) from this process."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--address",
            help="host:port to listen on (default: AGENTDASH_OTLP_GRPC, else localhost:4317)",
        )
        parser.add_argument("--workers", type=int, help="threads (AGENTDASH_OTLP_GRPC_WORKERS)")

    def handle(self, *args: Any, **options: Any) -> None:
        configured = str(agentdash_setting("OTLP_GRPC")).strip()
        fallback = "localhost:4317" if configured.lower() in ("", "off") else configured
        address = options["address"] or fallback
        bound: list[int] = []
        server = grpc_server_start(address, workers=options["workers"], on_bound=bound.append)
        if server is None:
            raise CommandError(f"cannot listen on {address} (see the log)")
        self.stdout.write(f"OTLP/gRPC on {address} (port {bound[0]})", ending="\n")
        self.stdout.flush()
        stop = threading.Event()
        for signum in (signal.SIGTERM, signal.SIGINT):
            signal.signal(signum, lambda *_: stop.set())
        stop.wait()
        server.stop(GRACE_S).wait()
