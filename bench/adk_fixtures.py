"""Regenerates the real-ADK OTLP fixtures: ``.venv/bin/python bench/adk_fixtures.py``.

Ensures bench/.venv-adk (``run.ensure_adk_venv``), starts a throwaway OTLP/HTTP receiver on
127.0.0.1, runs ``tests/agentdash/ingest/adk_agent.py`` under that venv once per ADK
telemetry setting, and writes the one protobuf body each run POSTs as
``tests/agentdash/ingest/fixtures/adk_<version><variant>.pb`` with its OTLP/JSON rendering
(``otlp_print``: ids in hex, enums as integers) beside it as ``.json``. Prints, per variant,
each span name with the attribute keys it carries (the table in fixtures/README.md).

Ids and timestamps differ on every run; names, keys and the tree do not.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
sys.path.insert(0, str(BENCH))
sys.path.insert(0, str(ROOT))

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (  # noqa: E402
    ExportTraceServiceRequest,
)
from run import ADK_PYTHON, ADK_VERSION, ensure_adk_venv  # noqa: E402

from tests.agentdash.otlp_receiver import otlp_print  # noqa: E402

AGENT = ROOT / "tests" / "agentdash" / "ingest" / "adk_agent.py"
FIXTURES = ROOT / "tests" / "agentdash" / "ingest" / "fixtures"
SESSION_ID = "adk-session-1"
HEADER = ("authorization", "Bearer fixture-key")
# file suffix → ADK's own telemetry switches for that run
VARIANTS: dict[str, dict[str, str]] = {
    "": {},  # the default: schema 2 (GenAI semconv aligned), no message content
    "_content": {"OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": "SPAN_ONLY"},
    "_legacy": {"ADK_TELEMETRY_SCHEMA_VERSION_OPT_IN": "1"},  # invocation / call_llm spans
}


class Receiver(BaseHTTPRequestHandler):
    """Keeps every POST body with its path and headers; answers 200 with no body."""

    bodies: list[tuple[str, dict[str, str], bytes]] = []

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        self.bodies.append((self.path, dict(self.headers.items()), body))
        self.send_response(200)
        self.send_header("Content-Type", "application/x-protobuf")
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, format: str, *args: object) -> None:
        pass


def capture(*, port: int, settings: dict[str, str]) -> bytes:
    """Runs the agent with ``settings`` and returns the one body it POSTed."""
    Receiver.bodies.clear()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OTEL_", "ADK_"))}
    env.update(settings)
    env["OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"] = f"http://127.0.0.1:{port}/v1/traces"
    env["OTEL_EXPORTER_OTLP_TRACES_HEADERS"] = f"{HEADER[0]}={HEADER[1]}"
    done = subprocess.run(
        [str(ADK_PYTHON), str(AGENT), SESSION_ID, "--turns", "2"],
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
    )
    if done.returncode != 0:
        raise SystemExit(f"adk_agent.py failed ({done.returncode}):\n{done.stderr}")
    if len(Receiver.bodies) != 1:
        raise SystemExit(f"expected one POST, got {len(Receiver.bodies)}")
    path, headers, body = Receiver.bodies[0]
    lowered = {k.lower(): v for k, v in headers.items()}
    assert path == "/v1/traces", path
    assert lowered.get("content-type") == "application/x-protobuf", headers
    assert lowered.get(HEADER[0]) == HEADER[1], headers
    return body


def keys_by_span(message: ExportTraceServiceRequest) -> dict[str, list[str]]:
    """Span name → the attribute keys seen on spans of that name, in first-seen order."""
    found: dict[str, list[str]] = {}
    for resource in message.resource_spans:
        for scope in resource.scope_spans:
            for span in scope.spans:
                keys = found.setdefault(span.name, [])
                keys.extend(a.key for a in span.attributes if a.key not in keys)
    return found


def main() -> None:
    ensure_adk_venv()
    FIXTURES.mkdir(parents=True, exist_ok=True)
    server = HTTPServer(("127.0.0.1", 0), Receiver)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        for suffix, settings in VARIANTS.items():
            body = capture(port=server.server_address[1], settings=settings)
            message = ExportTraceServiceRequest.FromString(body)
            stem = f"adk_{ADK_VERSION}{suffix}"  # not Path.with_suffix: the version has dots
            (FIXTURES / f"{stem}.pb").write_bytes(body)
            document = json.dumps(otlp_print(message), indent=1, ensure_ascii=False)
            (FIXTURES / f"{stem}.json").write_text(document + "\n", encoding="utf-8")
            print(f"## {stem} {settings or '(defaults)'}: {len(body)} bytes")
            for name, keys in keys_by_span(message).items():
                print(f"- `{name}`: {', '.join(f'`{k}`' for k in keys) or '(none)'}")
    finally:
        server.shutdown()


if __name__ == "__main__":
    main()
