"""Captures what real instrumentation libraries export, as ingest fixtures:
``.venv/bin/python bench/sender_fixtures.py [NAME ...]``.

Each sender (``SENDERS``) is an app in ``tests/agentdash/ingest/senders/`` run in a venv of its
own holding the library's release from PyPI (made once per machine in the user's cache,
``~/.cache/agentdash/venv-sender-<name>-<key>``, keyed by the Python and the requirements;
uv installs it when the project has uv). The app exports with the official OTLP/HTTP exporter
to a throwaway receiver on 127.0.0.1; the one body it POSTs is written as
``tests/agentdash/ingest/fixtures/<name>.pb`` with its OTLP/JSON rendering beside it as
``.json``. Prints, per sender, each span name with the attribute keys it carries.

Ids and timestamps differ on every run; names, keys and the tree do not.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import threading
from dataclasses import dataclass, field
from http.server import HTTPServer
from pathlib import Path

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
sys.path.insert(0, str(BENCH))
sys.path.insert(0, str(ROOT))

from adk_fixtures import HEADER, Receiver, keys_by_span  # noqa: E402
from google.protobuf.json_format import MessageToDict  # noqa: E402
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import (  # noqa: E402
    ExportLogsServiceRequest,
)
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (  # noqa: E402
    ExportTraceServiceRequest,
)
from run import _installer  # noqa: E402

from tests.agentdash.otlp_receiver import otlp_print  # noqa: E402

APPS = ROOT / "tests" / "agentdash" / "ingest" / "senders"
FIXTURES = ROOT / "tests" / "agentdash" / "ingest" / "fixtures"
OTLP_HTTP = ("opentelemetry-sdk==1.45.2", "opentelemetry-exporter-otlp-proto-http==1.45.2")
OPENAI = ("openai==3.57.0", "httpx==0.28.1")


@dataclass(frozen=True)
class Sender:
    app: str
    requirements: tuple[str, ...]
    env: dict[str, str] = field(default_factory=dict)
    packages: tuple[str, ...] = ()  # whose versions the app reports
    logs: bool = False  # it exports logs too: captured beside, as ``<name>.logs.pb``


SENDERS: dict[str, Sender] = {
    "openinference_openai": Sender(
        "openinference_openai.py",
        (*OPENAI, "openinference-instrumentation-openai==0.1.66",
         "openinference-instrumentation==0.1.72", *OTLP_HTTP),
        packages=("openai", "openinference-instrumentation-openai"),
    ),
    "genai_openai_v2": Sender(
        "genai_openai_v2.py",
        (*OPENAI, "opentelemetry-instrumentation-openai-v2==2.4b0",
         "opentelemetry-util-genai==0.4b0", *OTLP_HTTP),
        env={"OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": "SPAN_ONLY",
             "OTEL_SEMCONV_STABILITY_OPT_IN": "gen_ai_latest_experimental"},
        packages=("openai", "opentelemetry-instrumentation-openai-v2"),
    ),
    # Messages as log records, per message (the conventions' first events, the default of
    # these releases with content capture on) and as one inference event (the latest).
    "genai_openai_v2_log_events": Sender(
        "genai_openai_v2.py",
        (*OPENAI, "opentelemetry-instrumentation-openai-v2==2.4b0",
         "opentelemetry-util-genai==0.4b0", *OTLP_HTTP),
        env={"OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": "true"},
        packages=("openai", "opentelemetry-instrumentation-openai-v2"),
        logs=True,
    ),
    "genai_openai_v2_event_only": Sender(
        "genai_openai_v2.py",
        (*OPENAI, "opentelemetry-instrumentation-openai-v2==2.4b0",
         "opentelemetry-util-genai==0.4b0", *OTLP_HTTP),
        env={"OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": "EVENT_ONLY",
             "OTEL_SEMCONV_STABILITY_OPT_IN": "gen_ai_latest_experimental"},
        packages=("openai", "opentelemetry-instrumentation-openai-v2"),
        logs=True,
    ),
    "any_agent": Sender(
        "any_agent_app.py",
        ("any-agent==1.18.0", "any-llm-sdk[openai]==1.40.2", "mcp==1.30.0", *OPENAI, *OTLP_HTTP),
        packages=("any-agent", "any-llm-sdk"),
    ),
    "traceloop_openai": Sender(
        "traceloop_openai.py",
        ("traceloop-sdk==0.62.4", *OPENAI),
        env={"TRACELOOP_TRACE_CONTENT": "true", "TRACELOOP_TELEMETRY": "false"},
        packages=("traceloop-sdk", "opentelemetry-instrumentation-openai", "openai"),
    ),
    "traceloop_legacy_openai": Sender(
        "traceloop_openai.py",
        ("traceloop-sdk==0.47.5", "openai==1.109.1", "httpx==0.28.1", "opentelemetry-sdk==1.36.0",
         "opentelemetry-exporter-otlp-proto-http==1.36.0"),
        env={"TRACELOOP_TRACE_CONTENT": "true", "TRACELOOP_TELEMETRY": "false"},
        packages=("traceloop-sdk", "opentelemetry-instrumentation-openai", "openai"),
    ),
    "pydantic_ai": Sender(
        "pydantic_ai_app.py",
        ("pydantic-ai-slim[openai]==2.68.0", *OPENAI, *OTLP_HTTP),
        packages=("pydantic-ai-slim", "openai"),
    ),
}  # fmt: skip


def venv(name: str, sender: Sender) -> Path:
    """The Python of ``sender``'s venv, made once per machine (module docstring)."""
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    key = hashlib.sha256(f"{sys.version}|{sys.base_prefix}|{sender.requirements}".encode())
    where = base / "agentdash" / f"venv-sender-{name}-{key.hexdigest()[:16]}"
    python = where / "bin" / "python"
    done = where / ".agentdash-complete"
    if not done.exists():
        print(f"creating {where} with {' '.join(sender.requirements)}", flush=True)
        subprocess.run([sys.executable, "-m", "venv", "--clear", where], check=True)
        subprocess.run([*_installer(python), *sender.requirements], check=True)
        done.touch()
    return python


def capture(name: str, sender: Sender, port: int) -> tuple[bytes, bytes | None]:
    """Run ``sender``'s app; the one body it POSTed to ``/v1/traces`` (and to ``/v1/logs``
    when it exports logs)."""
    Receiver.bodies.clear()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OTEL_", "TRACELOOP_"))}
    env.update(sender.env)
    env["OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"] = f"http://127.0.0.1:{port}/v1/traces"
    env["OTEL_EXPORTER_OTLP_TRACES_HEADERS"] = f"{HEADER[0]}={HEADER[1]}"
    if sender.logs:
        env["OTEL_EXPORTER_OTLP_LOGS_ENDPOINT"] = f"http://127.0.0.1:{port}/v1/logs"
        env["OTEL_EXPORTER_OTLP_LOGS_HEADERS"] = f"{HEADER[0]}={HEADER[1]}"
    env["PYTHONPATH"] = str(APPS)
    python = venv(name, sender)
    done = subprocess.run(
        [str(python), str(APPS / sender.app), *sender.packages],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    if done.returncode != 0:
        raise SystemExit(f"{sender.app} failed ({done.returncode}):\n{done.stderr[-5000:]}")
    print(done.stdout.strip().splitlines()[-1], flush=True)
    bodies = [body for path, _, body in Receiver.bodies if path == "/v1/traces"]
    logs = [body for path, _, body in Receiver.bodies if path == "/v1/logs"]
    if len(bodies) != 1 or len(logs) != (1 if sender.logs else 0):
        raise SystemExit(f"{name}: expected one POST each, got {len(bodies)} and {len(logs)}")
    return bodies[0], (logs[0] if logs else None)


def main(names: list[str]) -> None:
    FIXTURES.mkdir(parents=True, exist_ok=True)
    server = HTTPServer(("127.0.0.1", 0), Receiver)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        for name in names or list(SENDERS):
            body, logs = capture(name, SENDERS[name], server.server_address[1])
            if logs is not None:
                (FIXTURES / f"{name}.logs.pb").write_bytes(logs)
                rendered = MessageToDict(ExportLogsServiceRequest.FromString(logs))
                text = json.dumps(rendered, indent=1, ensure_ascii=False)
                (FIXTURES / f"{name}.logs.json").write_text(text + "\n", encoding="utf-8")
            message = ExportTraceServiceRequest.FromString(body)
            (FIXTURES / f"{name}.pb").write_bytes(body)
            document = json.dumps(otlp_print(message), indent=1, ensure_ascii=False)
            (FIXTURES / f"{name}.json").write_text(document + "\n", encoding="utf-8")
            print(f"## {name}: {len(body)} bytes")
            for span_name, keys in keys_by_span(message).items():
                print(f"- `{span_name}`: {', '.join(f'`{k}`' for k in keys) or '(none)'}")
    finally:
        server.shutdown()


if __name__ == "__main__":
    main(sys.argv[1:])
