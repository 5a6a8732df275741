"""OTLP ingest: spans/s stored and visible to a live client, and latency from POST to client
(``make bench-ingest``; docs/BENCHMARKS.md, "OTLP ingest"), with Arize Phoenix as the peer.

  .venv/bin/python bench/ingest.py [--batches N] [--spans N] [--rounds N] [--senders 1,4]
                                   [--peer phoenix|none] [--debug on|off] [--profile]
                                   [--profile-gil] [--no-doc] [--decoders N]

Ours: the embedded default (one daphne, an SQLite file, the inline executor, the in-memory
channel layer, DEBUG on as ``make run``) started in a temporary directory with
``AGENTDASH_INGEST_RATE_PER_S=0`` (no rate limit); an ingest key of alice's
(``manage.py ingest_key create``); a warm-up batch names the conversation ``bench`` so its
session exists, and a websocket client (alice's) follows that session from its current seq.

Each measurement POSTs ``--batches`` prebuilt OTLP/HTTP protobuf bodies of ``--spans`` spans
(one trace each, a fresh one per body: an agent's tree — model calls with token usage, tool
calls with a few hundred bytes of arguments and results, sub-agents) from 1 or 4 sender
threads, each on a keep-alive connection:

- **visible spans/s**: spans / (first POST sent → last span received on the socket);
- **POST spans/s**: spans / (first POST sent → last POST answered);
- **latency**: per span, its receipt on the socket (``time.time_ns()``) − the send time of the
  POST that carried it.

The peer, Arize Phoenix (``phoenix serve``, its own SQLite in a temporary directory, in its
own venv ``bench/.venv-phoenix`` made here on first use), gets the same bodies at its
``/v1/traces``. It has no push to clients: its "visible" is when its GraphQL API counts the
spans (polled every ``PHOENIX_POLL_S``); its per-batch latency assumes it stores batches in the
order they were sent (it queues them), so it is an estimate at the polling's resolution.

Rounds alternate ours and the peer's order; the medians of the rounds are reported.
``--profile`` adds one round on ours under py-spy (``bench/.venv-pyspy``) and prints where
daphne's time went (``--profile-gil``: only the thread holding Python's lock).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import http.client
import json
import os
import random
import re
import signal
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from _doc import DOC, doc_update, machine  # noqa: E402
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (  # noqa: E402
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)
from opentelemetry.proto.common.v1.common_pb2 import InstrumentationScope, KeyValue  # noqa: E402
from opentelemetry.proto.resource.v1.resource_pb2 import Resource  # noqa: E402
from opentelemetry.proto.trace.v1.trace_pb2 import (  # noqa: E402
    ResourceSpans,
    ScopeSpans,
    Span,
    Status,
)

from tests.agentdash.ingest.otlp_bodies import value  # noqa: E402
from tests.agentdash.live_harness import (  # noqa: E402
    Browserless,
    LiveClient,
    Processes,
    base_env,
    free_port,
    manage,
)

BENCH = ROOT / "bench"
PHOENIX_VERSION = "20.26.1"
PHOENIX_VENV = BENCH / ".venv-phoenix"
PYSPY_VENV = BENCH / ".venv-pyspy"
PHOENIX_POLL_S = 0.5  # each count costs it ~6 ms of CPU: rarer polls load it less
CONVERSATION = "bench"
GOALS = {"spans_per_s": 10_000.0, "p99": 250.0}
PROTOBUF = "application/x-protobuf"
WAIT_S = 600.0


# ── Bodies: one agent's trace per batch ────────────────────────────────────────────────────
def _attributes(values: dict[str, Any]) -> list[KeyValue]:
    return [KeyValue(key=k, value=value(v)) for k, v in values.items()]


CITIES = ("Paris", "Lisbon", "Kyoto", "Montréal", "Nairobi", "Oslo", "Lima", "Hanoi")
TOOLS = ("get_weather", "search_flights", "find_hotels", "currency_convert")


def _tool_io(rng: random.Random, tool: str, call: int) -> tuple[str, str]:
    """Arguments (~200 bytes) and a result (~400 bytes) as a function tool's JSON."""
    city = rng.choice(CITIES)
    args = {
        "city": city,
        "date": f"2026-12-{1 + call % 28:02d}",
        "travellers": rng.randint(1, 4),
        "preferences": {"budget": rng.choice(["low", "mid", "high"]), "tool": tool},
        "note": f"step {call}: compare options near the centre of {city}, avoid red-eye",
    }
    result = {
        "status": "ok",
        "source": f"{tool}-api",
        "items": [
            {"name": f"{city} option {i}", "price": round(rng.uniform(40, 900), 2), "score": i}
            for i in range(4)
        ],
        "summary": f"Found 4 options in {city}; the cheapest is option 0, the best rated "
        f"option 3. Prices in EUR, taxes included, availability checked just now.",
    }
    return json.dumps(args), json.dumps(result)


def agent_trace(n: int, seed: int, conversation: str) -> tuple[str, bytes]:
    """A trace of exactly ``n`` spans as an OTLP protobuf body: an agent (naming
    ``conversation``, the root) that alternates model and tool calls; every eighth tool is a
    sub-agent with a model and a tool call of its own. The trace id (hex) and the body."""
    rng = random.Random(seed)
    trace = rng.randbytes(16)
    spans: list[Span] = []
    clock = [time.time_ns() - n * 300_000_000]

    def add(name: str, parent: Span | None, attrs: dict[str, Any], ms: int, kind: int) -> Span:
        start = clock[0]
        clock[0] += ms * 1_000_000
        span = Span(
            trace_id=trace,
            span_id=rng.randbytes(7) + b"\x01",
            parent_span_id=parent.span_id if parent is not None else b"",
            name=name,
            kind=kind,
            start_time_unix_nano=start,
            end_time_unix_nano=clock[0],
            attributes=_attributes(attrs),
            status=Status(code=Status.STATUS_CODE_OK),
        )
        spans.append(span)
        return span

    def model(parent: Span) -> None:
        add(
            "chat gemini-2.5-flash",
            parent,
            {
                "gen_ai.operation.name": "chat",
                "gen_ai.provider.name": "gcp.gemini",
                "gen_ai.request.model": "gemini-2.5-flash",
                "gen_ai.response.model": "gemini-2.5-flash",
                "gen_ai.request.temperature": 0.2,
                "gen_ai.usage.input_tokens": rng.randint(800, 6000),
                "gen_ai.usage.output_tokens": rng.randint(20, 400),
                "gen_ai.response.finish_reasons": ["stop"],
            },
            rng.randint(300, 900),
            Span.SPAN_KIND_CLIENT,
        )

    def tool(parent: Span, name: str, call: int) -> Span:
        args, result = _tool_io(rng, name, call)
        return add(
            f"execute_tool {name}",
            parent,
            {
                "gen_ai.operation.name": "execute_tool",
                "gen_ai.tool.name": name,
                "gen_ai.tool.type": "function",
                "gen_ai.tool.call.id": f"call_{rng.getrandbits(48):012x}",
                "gen_ai.tool.call.arguments": args,
                "gen_ai.tool.call.result": result,
            },
            rng.randint(20, 200),
            Span.SPAN_KIND_INTERNAL,
        )

    root = add(
        "invoke_agent travel_planner",
        None,
        {
            "gen_ai.operation.name": "invoke_agent",
            "gen_ai.agent.name": "travel_planner",
            "gen_ai.agent.description": "Plans trips: flights, hotels, weather.",
            "gen_ai.conversation.id": conversation,
        },
        0,
        Span.SPAN_KIND_INTERNAL,
    )
    call = 0
    while len(spans) < n:
        model(root)
        call += 1
        if call % 8 == 0 and len(spans) + 4 <= n:
            outer = tool(root, "research_agent", call)
            sub = add(
                "invoke_agent researcher",
                outer,
                {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "researcher"},
                0,
                Span.SPAN_KIND_INTERNAL,
            )
            model(sub)
            tool(sub, rng.choice(TOOLS), call)
        elif len(spans) < n:
            tool(root, rng.choice(TOOLS), call)
    del spans[n:]
    root.end_time_unix_nano = clock[0]
    request = ExportTraceServiceRequest(
        resource_spans=[
            ResourceSpans(
                resource=Resource(
                    attributes=_attributes(
                        {
                            "service.name": "bench-agent",
                            "telemetry.sdk.language": "python",
                            "telemetry.sdk.name": "opentelemetry",
                            "telemetry.sdk.version": "1.45.2",
                        }
                    )
                ),
                scope_spans=[
                    ScopeSpans(scope=InstrumentationScope(name="bench.ingest"), spans=spans)
                ],
            )
        ]
    )
    return trace.hex(), request.SerializeToString()


@dataclass
class Batches:
    traces: list[str]
    bodies: list[bytes]
    spans: int  # per body


def batches_make(count: int, spans: int, seed: int) -> Batches:
    made = [agent_trace(spans, seed * 100_000 + i, CONVERSATION) for i in range(count)]
    return Batches([t for t, _ in made], [b for _, b in made], spans)


# ── Sending ────────────────────────────────────────────────────────────────────────────────
@dataclass
class Sent:
    batch: int
    sent_ns: int
    done_ns: int


def send_all(batches: Batches, senders: int, connect: Any) -> list[Sent]:
    """Send every body, ``senders`` threads each with a connection of its own, in order of
    the batches: ``connect()`` gives a thread ``(send, close)``, ``send(body)`` returning the
    serialized ``ExportTraceServiceResponse`` (raising on an error answer). Raises unless every
    answer rejected nothing."""
    lock, queue = threading.Lock(), list(range(len(batches.bodies)))[::-1]
    sent: list[Sent] = []
    errors: list[BaseException] = []

    def sender() -> None:
        send, close = connect()
        try:
            while True:
                with lock:
                    if not queue or errors:
                        return
                    index = queue.pop()
                at = time.time_ns()
                answer = send(batches.bodies[index])
                done = time.time_ns()
                rejected = ExportTraceServiceResponse.FromString(answer).partial_success
                if rejected.rejected_spans:
                    raise RuntimeError(f"export {index}: {rejected.error_message}")
                with lock:
                    sent.append(Sent(index, at, done))
        except BaseException as exc:
            errors.append(exc)
        finally:
            close()

    threads = [threading.Thread(target=sender) for _ in range(senders)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    if errors:
        raise errors[0]
    return sorted(sent, key=lambda s: s.sent_ns)


def post_all(url: str, headers: dict[str, str], batches: Batches, senders: int) -> list[Sent]:
    """Every body over OTLP/HTTP, each sender on a keep-alive connection."""
    parts = urllib.parse.urlsplit(url)
    host, port = parts.hostname or "127.0.0.1", parts.port or 80

    def connect() -> Any:
        conn = http.client.HTTPConnection(host, port, timeout=120)

        def send(body: bytes) -> bytes:
            conn.request("POST", "/v1/traces", body, {**headers, "Content-Type": PROTOBUF})
            response = conn.getresponse()
            answer = response.read()
            if response.status != 200:
                raise RuntimeError(f"POST: {response.status} {answer[:300]!r}")
            return answer

        return send, conn.close

    return send_all(batches, senders, connect)


def grpc_send_all(address: str, key: str, batches: Batches, senders: int) -> list[Sent]:
    """The same bodies over OTLP/gRPC (the TraceService's Export, raw bytes: the exporter
    would only serialize them again), each sender on a channel of its own."""
    import grpc

    method = "/opentelemetry.proto.collector.trace.v1.TraceService/Export"

    def connect() -> Any:
        channel = grpc.insecure_channel(address, options=[("grpc.max_send_message_length", -1)])
        export = channel.unary_unary(method)

        def send(body: bytes) -> bytes:
            answer: bytes = export(body, metadata=[("authorization", f"Bearer {key}")], timeout=120)
            return answer

        return send, channel.close

    return send_all(batches, senders, connect)


# ── Measurements ───────────────────────────────────────────────────────────────────────────
def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def cpu_s(pid: int) -> float:
    """User + system CPU seconds so far of process ``pid`` (all its threads) and of the
    processes it started that still run (ours: its decoding processes)."""
    return own_cpu_s(pid) + sum(cpu_s(child) for child in children_of(pid))


def own_cpu_s(pid: int) -> float:
    """The CPU seconds of process ``pid`` alone."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except FileNotFoundError:  # ended between the listing and the read
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def children_of(pid: int) -> list[int]:
    found: list[int] = []
    for task in Path(f"/proc/{pid}/task").glob("*"):
        with contextlib.suppress(FileNotFoundError):
            found += [int(c) for c in (task / "children").read_text().split()]
    return found


def decoders_wait(pid: int, timeout: float = 60.0) -> None:
    """Wait until server ``pid``'s decoding process (started by its first export) has set up:
    it runs, and its CPU time stopped growing. Only when one is expected (``--decoders 0``:
    none comes)."""
    deadline = time.monotonic() + timeout
    while not children_of(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    last = -1.0
    while time.monotonic() < deadline:
        now = sum(cpu_s(child) for child in children_of(pid))
        if now == last:
            return
        last = now
        time.sleep(0.3)


def cpu_used(server_s: float, client_s: float, wall: float, spans: int) -> dict[str, float]:
    return {
        "server_cpu": server_s / wall,  # cores busy on average
        "server_us": server_s / spans * 1e6,  # CPU time per span
        "client_cpu": client_s / wall,
    }


def summary(
    spans: int, sent: list[Sent], visible_ns: int, latencies: list[float], cpu: dict[str, float]
) -> dict[str, Any]:
    first = sent[0].sent_ns
    return {
        "spans": spans,
        "visible_per_s": spans / ((visible_ns - first) / 1e9),
        "post_per_s": spans / ((max(s.done_ns for s in sent) - first) / 1e9),
        "p50": statistics.median(latencies),
        "p99": pct(latencies, 0.99),
        "post_p50": statistics.median((s.done_ns - s.sent_ns) / 1e6 for s in sent),
        **cpu,
    }


class Arrivals:
    """The first receipt of each span of ``traces`` on ``client``'s socket (read as it grows)."""

    def __init__(self, client: LiveClient, traces: set[str]) -> None:
        self.client, self.traces, self.read = client, traces, 0
        self.first: dict[tuple[str, str], int] = {}

    def count(self) -> int:
        received = self.client.received
        for r in received[self.read :]:
            if r.message.get("type") != "changes":
                continue
            for item in r.message["items"]:
                data = item["data"]
                if item["kind"] == "span" and data and data["trace_id"] in self.traces:
                    self.first.setdefault((data["trace_id"], data["span_id"]), r.at_ns)
        self.read = len(received)
        return len(self.first)


@dataclass
class Ours:
    url: str
    key: str
    db: Path
    pid: int
    grpc_address: str = ""
    session_id: str = ""
    client: LiveClient | None = None

    @property
    def headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.key}"}

    def stored(self) -> int:
        with contextlib.closing(sqlite3.connect(f"file:{self.db}?mode=ro", uri=True)) as conn:
            query = "SELECT count(*) FROM spans_span WHERE session_id = ?"
            return int(conn.execute(query, (self.session_id,)).fetchone()[0])


async def ours_open(ours: Ours, warm_up: Batches) -> None:
    """The warm-up batch makes the session; alice's socket then follows it from its seq, and
    a second batch goes through it untimed."""
    post_all(ours.url, ours.headers, Batches(warm_up.traces[:1], warm_up.bodies[:1], 0), 1)
    alice = Browserless(ours.url)
    alice.log_in("alice")
    with alice.opener.open(f"{ours.url}/", timeout=30) as page:
        listed = re.findall(r"/sessions/(otlp-[0-9a-f]+)/", page.read().decode())
    assert listed, "the ingested session is not in alice's list"
    ours.session_id = listed[0]
    ours.client = LiveClient(alice, ours.session_id)
    await ours.client.open()
    await ours.client.hello(after_seq=alice.snapshot(ours.session_id)["seq"])
    arrivals = Arrivals(ours.client, set(warm_up.traces[1:2]))
    await asyncio.to_thread(
        post_all, ours.url, ours.headers, Batches(warm_up.traces[1:2], warm_up.bodies[1:2], 0), 1
    )
    await ours.client.wait_for(lambda _: arrivals.count() >= warm_up.spans, "the warm-up batch")


async def ours_round(
    ours: Ours, batches: Batches, senders: int, grpc: bool = False
) -> dict[str, Any]:
    client = ours.client
    assert client is not None
    client.received.clear()  # the last round's are all in: nothing is in flight
    total = len(batches.bodies) * batches.spans
    arrivals = Arrivals(client, set(batches.traces))
    before = ours.stored()
    cpu0, own0, serving0 = cpu_s(ours.pid), time.process_time(), own_cpu_s(ours.pid)
    if grpc:
        sent = await asyncio.to_thread(grpc_send_all, ours.grpc_address, ours.key, batches, senders)
    else:
        sent = await asyncio.to_thread(post_all, ours.url, ours.headers, batches, senders)
    await client.wait_for(lambda _: arrivals.count() >= total, "every span", timeout=WAIT_S)
    visible = max(arrivals.first.values())
    wall = (visible - sent[0].sent_ns) / 1e9
    cpu = cpu_used(cpu_s(ours.pid) - cpu0, time.process_time() - own0, wall, total)
    # The serving process alone (the bound: it alone stores and publishes).
    cpu["serving_us"] = (own_cpu_s(ours.pid) - serving0) / total * 1e6
    stored = ours.stored() - before
    assert stored == total, f"{stored} spans stored, {total} sent"
    sent_at = {batches.traces[s.batch]: s.sent_ns for s in sent}
    latencies = [(at - sent_at[trace]) / 1e6 for (trace, _), at in arrivals.first.items()]
    return summary(total, sent, visible, latencies, cpu)


# ── The peer: Arize Phoenix ────────────────────────────────────────────────────────────────
def phoenix_ensure() -> Path:
    """``bench/.venv-phoenix`` with arize-phoenix (made with this interpreter on first use)."""
    python = PHOENIX_VENV / "bin" / "python"
    probe = "import importlib.metadata as m; print(m.version('arize-phoenix'))"
    found = ""
    if python.exists():
        run = subprocess.run([python, "-c", probe], capture_output=True, text=True, check=False)
        found = run.stdout.strip()
    if found != PHOENIX_VERSION:
        print(f"installing arize-phoenix=={PHOENIX_VERSION} into {PHOENIX_VENV}", flush=True)
        subprocess.run([sys.executable, "-m", "venv", PHOENIX_VENV], check=True)
        subprocess.run(
            [python, "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
             f"arize-phoenix=={PHOENIX_VERSION}"],
            check=True,
        )  # fmt: skip
    return PHOENIX_VENV / "bin" / "phoenix"


@dataclass
class Phoenix:
    url: str
    pid: int

    def count(self) -> int:
        """Spans its GraphQL API counts, all projects."""
        query = json.dumps({"query": "{ projects { edges { node { recordCount } } } }"})
        request = urllib.request.Request(
            f"{self.url}/graphql", query.encode(), {"Content-Type": "application/json"}
        )
        with urllib.request.urlopen(request, timeout=60) as answer:
            edges = json.load(answer)["data"]["projects"]["edges"]
        return sum(int(e["node"]["recordCount"]) for e in edges)


def phoenix_start(procs: Processes, tmp: Path) -> Phoenix:
    port = free_port()
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith("PHOENIX_")},
        "PHOENIX_WORKING_DIR": str(tmp / "phoenix"),
        "PHOENIX_PORT": str(port),
        "PHOENIX_HOST": "127.0.0.1",
        "PHOENIX_GRPC_PORT": str(free_port()),
        "PHOENIX_TELEMETRY_ENABLED": "false",
    }
    proc = procs.spawn("phoenix", [str(phoenix_ensure()), "serve"], env)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"phoenix exited with {proc.returncode}\n{procs.logs()}")
        with (
            contextlib.suppress(urllib.error.URLError, ConnectionError, TimeoutError),
            urllib.request.urlopen(f"{url}/graphql?query=%7B__typename%7D", timeout=2),
        ):
            return Phoenix(url, proc.pid)
        time.sleep(0.5)
    raise RuntimeError(f"phoenix did not answer in 180 s\n{procs.logs()}")


def phoenix_round(peer: Phoenix, batches: Batches, senders: int) -> dict[str, Any]:
    """Same bodies; visible = the first poll of its API that counts them all."""
    total = len(batches.bodies) * batches.spans
    base = peer.count()
    polls: list[tuple[int, int]] = []  # (answered at, spans counted)

    def poll() -> None:
        deadline = time.monotonic() + WAIT_S
        while not polls or polls[-1][1] < base + total:
            assert time.monotonic() < deadline, f"phoenix counts {polls[-1][1] - base}/{total}"
            time.sleep(PHOENIX_POLL_S)
            polls.append((time.time_ns(), peer.count()))

    cpu0, own0 = cpu_s(peer.pid), time.process_time()
    poller = threading.Thread(target=poll)
    poller.start()
    sent = post_all(peer.url, {}, batches, senders)
    poller.join()
    visible = polls[-1][0]
    wall = (visible - sent[0].sent_ns) / 1e9
    cpu = cpu_used(cpu_s(peer.pid) - cpu0, time.process_time() - own0, wall, total)
    # The k-th body sent counts as visible at the first poll counting k+1 bodies (it queues
    # them in order): one value per body, for each of its spans.
    latencies = []
    for k, s in enumerate(sent):
        need = base + (k + 1) * batches.spans
        at = next(t for t, c in polls if c >= need)
        latencies += [(at - s.sent_ns) / 1e6] * batches.spans
    return summary(total, sent, visible, latencies, cpu)


# ── Profile ────────────────────────────────────────────────────────────────────────────────
def pyspy_ensure() -> Path:
    pyspy = PYSPY_VENV / "bin" / "py-spy"
    if not pyspy.exists():
        subprocess.run([sys.executable, "-m", "venv", PYSPY_VENV], check=True)
        pip = [PYSPY_VENV / "bin" / "python", "-m", "pip", "install", "--quiet"]
        subprocess.run([*pip, "--disable-pip-version-check", "py-spy"], check=True)
    return pyspy


# Where a sampled frame's own time goes (first match of its module path; C code, SQLite's
# included, is counted in the Python frame that called it).
AREAS = (
    ("SQLite (statements run through Django's cursor)", ("django/db/backends/sqlite3/base.py",)),
    ("DEBUG's query log (last_executed_query)", ("django/db/backends/sqlite3/operations.py",)),
    ("Django ORM: queries and model instances", ("django/db/",)),
    ("JSON encode / decode", ("json/",)),
    ("deepcopy", ("copy.py",)),
    ("protobuf / OTLP unpacking", ("google/protobuf", "agentdash/ingest/otlp")),
    ("AgentDash code (all else)", ("agentdash/", "runtime/")),
    ("Django: request, middleware, signals", ("django/",)),
    ("daphne, Twisted, asgiref, Channels", ("daphne/", "twisted/", "asgiref/", "channels/")),
    ("websocket framing (autobahn)", ("autobahn/",)),
)


def _area(frame: str) -> str:
    return next((name for name, paths in AREAS if any(p in frame for p in paths)), "other")


# Leaf frames of a thread that waits (py-spy does not always see it idle).
WAITING = (
    "_worker (concurrent/futures/thread.py",
    "Condition.wait (",
    "Event.wait (",
    "Queue.get (",
    "EpollSelector.select (",
    "CurrentThreadExecutor.run_until_future (",
)


def profile_report(raw: Path, seconds: float, rate: int, top: int = 30) -> str:
    """Where daphne's time went, from py-spy's collapsed stacks of its threads, less those
    waiting: time by area (self time), and the AgentDash functions with the most time under
    them. Shares are of the busy samples (SQLite's C code runs without the GIL, alongside)."""
    inclusive: Counter[str] = Counter()
    areas: Counter[str] = Counter()
    total = 0
    for line in raw.read_text().splitlines():
        stack, _, n = line.rpartition(" ")
        frames = stack.split(";")
        count = int(n)
        if frames[-1].startswith(WAITING):
            continue
        total += count
        areas[_area(frames[-1])] += count
        for frame in set(frames):
            if frame.split("(")[-1].startswith(("agentdash/", "runtime/")):
                inclusive[frame] += count
    busy = total / (seconds * rate)
    lines = [f"{total} busy samples: {busy:.2f} threads busy on average", "-- self time by area"]
    lines += [f"{n / total:6.1%}  {area}" for area, n in areas.most_common()]
    lines.append("-- AgentDash functions, time under them")
    lines += [f"{n / total:6.1%}  {frame}" for frame, n in inclusive.most_common(top)]
    return "\n".join(lines)


async def profiled_round(
    ours: Ours, batches: Batches, senders: int, out: Path, *, gil: bool = False
) -> str:
    """One round on ours under py-spy; ``gil``: sample only the thread holding Python's
    lock (where the one core's time goes; SQLite's C code, which runs without it, is left
    out)."""
    pyspy, rate = pyspy_ensure(), 200
    args = [str(pyspy), "record", "--pid", str(ours.pid), "--rate", str(rate), "--format", "raw"]
    proc = subprocess.Popen(
        [*args, "--function", *(["--gil"] if gil else []), "-o", str(out)],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )
    await asyncio.sleep(2)  # py-spy attached
    started = time.monotonic()
    found = await ours_round(ours, batches, senders)
    proc.send_signal(signal.SIGINT)
    seconds = time.monotonic() - started
    proc.wait(60)
    print(f"profiled round: {fmt_row(found)}", flush=True)
    return profile_report(out, seconds + 2, rate)


# ── Running it ─────────────────────────────────────────────────────────────────────────────
@contextlib.contextmanager
def servers(
    tmp: Path, peer: str, debug: bool, decoders: int | None
) -> Iterator[tuple[Ours, Phoenix | None, Processes]]:
    db = tmp / "agentdash.sqlite3"
    env = base_env(
        DATABASE_URL=f"sqlite:///{db}",
        AGENTDASH_VAR_DIR=str(tmp / "var"),
        AGENTDASH_EXECUTOR="inline",
        AGENTDASH_INGEST_RATE_PER_S="0",
        LOG_LEVEL="WARNING",
    )
    env.pop("REDIS_URL", None)
    manage(env, "migrate", "--noinput")
    manage(env, "seed_demo")
    made = subprocess.run(
        [sys.executable, "manage.py", "ingest_key", "create", "--owner", "alice",
         "--project", "bench"],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=120, check=True,
    )  # fmt: skip
    key = made.stdout.strip()
    procs = Processes(tmp)
    try:
        served = dict(env)
        grpc_address = f"127.0.0.1:{free_port()}"
        served["AGENTDASH_OTLP_GRPC"] = grpc_address  # the same process serves OTLP/gRPC
        if decoders is not None:  # else the default: one on a machine of 2 CPUs or more
            served["AGENTDASH_INGEST_DECODE_PROCESSES"] = str(decoders)
        if not debug:  # what DEBUG's query log costs (the embedded default has it on)
            served.update(DEBUG="0", SECRET_KEY="bench-ingest-secret-key-" + "x" * 40)
        url = procs.daphne("daphne", served)
        pid = next(p.pid for name, p in procs.procs if name == "daphne")
        phoenix = phoenix_start(procs, tmp) if peer == "phoenix" else None
        yield Ours(url, key, db, pid, grpc_address), phoenix, procs
    finally:
        procs.stop()


def fmt_row(r: dict[str, Any]) -> str:
    serving = f"; the serving process {r['serving_us']:.0f}" if "serving_us" in r else ""
    return (
        f"visible {r['visible_per_s']:,.0f} spans/s, POST {r['post_per_s']:,.0f} spans/s, "
        f"p50 {r['p50']:.0f} ms, p99 {r['p99']:.0f} ms, server CPU {r['server_cpu']:.2f} cores "
        f"({r['server_us']:.0f} µs/span{serving}), client CPU {r['client_cpu']:.2f} cores"
    )


async def measure(
    ours: Ours, phoenix: Phoenix | None, args: argparse.Namespace
) -> tuple[dict[tuple[str, int], list[dict[str, Any]]], str]:
    warm_up = batches_make(2, args.spans, seed=0)
    await ours_open(ours, warm_up)
    if args.decoders is None or args.decoders > 0:
        await asyncio.to_thread(decoders_wait, ours.pid)  # started by the warm-up's export
    if phoenix is not None:
        await asyncio.to_thread(post_all, phoenix.url, {}, warm_up, 1)
    results: dict[tuple[str, int], list[dict[str, Any]]] = {}
    seed = 1
    for r in range(args.rounds):
        for senders in args.senders:
            batches = batches_make(args.batches, args.spans, seed)
            # Over gRPC, other traces of the same shape: the same spans again would be spans
            # already stored (taken, not written again, not sent to the socket).
            other = batches_make(args.batches, args.spans, seed + 50_000)
            seed += 1
            sides = ["agentdash", "agentdash-grpc"]
            sides += ["phoenix"] if phoenix is not None else []
            for side in sides if r % 2 == 0 else sides[::-1]:
                if side == "agentdash-grpc":
                    found = await ours_round(ours, other, senders, grpc=True)
                elif side == "agentdash":
                    found = await ours_round(ours, batches, senders)
                else:
                    assert phoenix is not None
                    found = await asyncio.to_thread(phoenix_round, phoenix, batches, senders)
                results.setdefault((side, senders), []).append(found)
                print(f"round {r + 1}, {side}, {senders} sender(s): {fmt_row(found)}", flush=True)
                await asyncio.sleep(1)
    report = ""
    if args.profile:
        batches = batches_make(args.batches, args.spans, seed)
        out = Path(tempfile.gettempdir()) / f"agentdash-bench-ingest-{os.getpid()}.pyspy"
        report = await profiled_round(ours, batches, args.senders[0], out, gil=args.profile_gil)
        print(f"py-spy of daphne (raw stacks: {out}):\n{report}", flush=True)
    assert ours.client is not None
    await ours.client.close()
    return results, report


def med(rows: list[dict[str, Any]], key: str) -> float:
    return statistics.median(r[key] for r in rows)


def verdict(rows: list[dict[str, Any]]) -> str:
    rate, p99 = med(rows, "visible_per_s"), med(rows, "p99")
    met = rate >= GOALS["spans_per_s"] and p99 <= GOALS["p99"]
    return "met" if met else "**not met**"


def results_markdown(results: dict[tuple[str, int], list[dict[str, Any]]], args: Any) -> str:
    m = machine()
    date = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    load = os.getloadavg()[0]
    peer = f"Arize Phoenix {PHOENIX_VERSION} (`phoenix serve`, SQLite)" if args.peer else "none"
    lines = [
        f"Run {date} on {m['arch']}, {m['cpus']} CPUs ({m['cpu']}; load average after: "
        f"{load:.1f}), Python {m['python']}: `bench/ingest.py --batches {args.batches} "
        f"--spans {args.spans} --rounds {args.rounds} --debug {args.debug}`; "
        f"{args.batches} × {args.spans} spans per measurement, medians of {args.rounds} "
        f"rounds. Peer: {peer}.",
        "",
        "| server | senders | visible spans/s | POST spans/s | p50 POST → visible | p99 | "
        "POST answered, p50 | server CPU: cores, per span | client CPU | "
        "goal (≥ 10,000/s, p99 ≤ 250 ms) |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |",
    ]
    for (side, senders), rows in results.items():
        name = {
            "agentdash": "AgentDash, OTLP/HTTP (live client)",
            "agentdash-grpc": "AgentDash, OTLP/gRPC (live client)",
        }.get(side, "Phoenix, OTLP/HTTP (API count)")
        goal = verdict(rows) if side.startswith("agentdash") else "—"
        lines.append(
            f"| {name} | {senders} | {med(rows, 'visible_per_s'):,.0f} | "
            f"{med(rows, 'post_per_s'):,.0f} | {med(rows, 'p50'):,.0f} ms | "
            f"{med(rows, 'p99'):,.0f} ms | {med(rows, 'post_p50'):,.0f} ms | "
            f"{med(rows, 'server_cpu'):.2f}, {med(rows, 'server_us'):,.0f} µs | "
            f"{med(rows, 'client_cpu'):.2f} | {goal} |"
        )
    lines += ["", "| senders | visible spans/s, gRPC / HTTP | server µs per span, gRPC / HTTP |"]
    lines.append("| ---: | ---: | ---: |")
    for senders in args.senders:
        http_rows, grpc_rows = results[("agentdash", senders)], results[("agentdash-grpc", senders)]
        lines.append(
            f"| {senders} | {med(grpc_rows, 'visible_per_s') / med(http_rows, 'visible_per_s'):.2f}"
            f" | {med(grpc_rows, 'server_us') / med(http_rows, 'server_us'):.2f} |"
        )
    if args.peer:
        lines += ["", "| senders | visible spans/s, ours (HTTP) / Phoenix | p50, Phoenix / ours |"]
        lines.append("| ---: | ---: | ---: |")
        for senders in args.senders:
            ours, peer_rows = results[("agentdash", senders)], results[("phoenix", senders)]
            lines.append(
                f"| {senders} | {med(ours, 'visible_per_s') / med(peer_rows, 'visible_per_s'):.2f}"
                f" | {med(peer_rows, 'p50') / med(ours, 'p50'):.2f} |"
            )
    return "\n".join(lines)


def history_rows(results: dict[tuple[str, int], list[dict[str, Any]]], args: Any) -> str:
    m = machine()
    day, box = datetime.now(UTC).strftime("%Y-%m-%d"), f"{m['arch']}/{m['cpus']} CPUs"
    rows = []
    for senders in args.senders:
        ours = results[("agentdash", senders)]
        over_grpc = results[("agentdash-grpc", senders)]
        peer = results.get(("phoenix", senders))
        rows.append(
            f"| {day} | {box} | {senders} | {med(ours, 'visible_per_s'):,.0f} | "
            f"{med(ours, 'p50'):,.0f} / {med(ours, 'p99'):,.0f} | "
            f"{med(over_grpc, 'visible_per_s'):,.0f} | "
            + (f"{med(peer, 'visible_per_s'):,.0f} |" if peer else "— |")
        )
    return "\n".join(rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batches", type=int, default=40, help="bodies per measurement")
    parser.add_argument("--spans", type=int, default=512, help="spans per body")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--senders", default="1,4", help="concurrent senders, comma-separated")
    parser.add_argument("--peer", choices=("phoenix", "none"), default="phoenix")
    parser.add_argument("--profile", action="store_true", help="one more round under py-spy")
    parser.add_argument(
        "--profile-gil", action="store_true", help="profile only the thread holding the GIL"
    )
    parser.add_argument("--debug", choices=("on", "off"), default="on", help="daphne's DEBUG")
    parser.add_argument("--no-doc", action="store_true", help="leave docs/BENCHMARKS.md alone")
    parser.add_argument(
        "--decoders",
        type=int,
        default=None,
        help="the server's decoding processes (AGENTDASH_INGEST_DECODE_PROCESSES; 0: none)",
    )
    args = parser.parse_args()
    args.senders = [int(n) for n in args.senders.split(",")]
    args.peer = None if args.peer == "none" else args.peer
    with (
        tempfile.TemporaryDirectory(prefix="agentdash-bench-ingest-") as tmp_dir,
        servers(Path(tmp_dir), args.peer or "none", args.debug == "on", args.decoders) as (
            ours,
            phoenix,
            procs,
        ),
    ):
        try:
            results, _ = asyncio.run(measure(ours, phoenix, args))
        except BaseException:
            print(procs.logs(chars=20_000), file=sys.stderr)
            raise
    latest = results_markdown(results, args)
    print(latest)
    if not args.no_doc:
        doc_update(
            name="bench-ingest",
            heading="## OTLP ingest",
            latest=latest,
            history_header=(
                "| date | machine | senders | visible spans/s | p50 / p99 ms | Phoenix spans/s |"
                "\n| --- | --- | ---: | ---: | ---: | ---: |"
            ),
            history_row=history_rows(results, args),
        )
        print(f"\nupdated {DOC.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
