"""``agentdash.otel``: an agent's spans reach a collector when they start and again when they
end, batched, off the agent's thread; a collector that is down or hangs costs the agent
nothing. The collector is a local stand-in that reads what the official exporter sends."""

from __future__ import annotations

import subprocess
import sys
import threading
from collections.abc import Iterator

import pytest
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.trace import TracerProvider

from agentdash import otel
from agentdash.otel import LiveBatchSpanProcessor, install, traces_url
from tests.agentdash.otlp_collector import WAIT_S, Collector, attributes

KEY = "agd_test-key"


@pytest.fixture
def collector() -> Iterator[Collector]:
    with Collector() as found:
        yield found


@pytest.fixture
def provider() -> Iterator[TracerProvider]:
    """A provider of the test's own (the global one is the project's)."""
    found = TracerProvider(shutdown_on_exit=False)
    yield found
    found.shutdown()


def test_a_span_is_sent_when_it_starts_then_when_it_ends(
    collector: Collector, provider: TracerProvider
) -> None:
    processor = install(endpoint=collector.url, key=KEY, provider=provider)
    tracer = provider.get_tracer("test")

    span = tracer.start_span("execute_tool lookup", attributes={"gen_ai.tool.name": "lookup"})
    assert processor.force_flush()
    span.set_attribute("gen_ai.tool.call.result", "found")
    span.end()
    assert processor.force_flush()

    first, second = collector.received
    assert first.path == second.path == "/v1/traces"
    assert first.headers["authorization"] == f"Bearer {KEY}"
    assert first.headers["content-type"] == "application/x-protobuf"
    (start, _), (end, _) = collector.spans()
    assert start.span_id == end.span_id == span.get_span_context().span_id.to_bytes(8, "big")
    assert start.name == "execute_tool lookup" and start.start_time_unix_nano > 0
    assert start.end_time_unix_nano == 0  # "still running" to the ingest
    assert attributes(start) == {"gen_ai.tool.name": "lookup"}
    assert end.end_time_unix_nano >= end.start_time_unix_nano == start.start_time_unix_nano
    assert attributes(end) == {"gen_ai.tool.name": "lookup", "gen_ai.tool.call.result": "found"}


def test_a_span_that_ends_before_its_start_is_sent_goes_once(
    collector: Collector, provider: TracerProvider
) -> None:
    processor = LiveBatchSpanProcessor(
        OTLPSpanExporter(endpoint=traces_url(collector.url)),
        schedule_delay_millis=WAIT_S * 1000,  # nothing leaves before the flush
    )
    provider.add_span_processor(processor)
    tracer = provider.get_tracer("test")
    with tracer.start_as_current_span("invoke_agent a"), tracer.start_as_current_span("chat"):
        pass
    assert processor.force_flush()
    (request,) = collector.received
    spans = [s for r in request.message.resource_spans for sc in r.scope_spans for s in sc.spans]
    assert [s.name for s in spans] == ["invoke_agent a", "chat"]  # in order of start
    assert all(s.end_time_unix_nano > 0 for s in spans)


def small_queue_held(
    collector: Collector, provider: TracerProvider, **options: int
) -> LiveBatchSpanProcessor:
    """The processor installed with a queue of 8, exporting at once, to a collector that
    holds every request until released."""
    collector.hold()
    return install(
        endpoint=collector.url,
        key=KEY,
        provider=provider,
        max_queue_size=8,
        schedule_delay_millis=1,
        **options,
    )


def test_a_hanging_collector_never_holds_up_the_agent(
    collector: Collector, provider: TracerProvider
) -> None:
    processor = small_queue_held(collector, provider, max_export_batch_size=2)
    tracer = provider.get_tracer("test")
    failures: list[BaseException] = []

    def agent() -> None:
        try:
            for i in range(200):
                with tracer.start_as_current_span(f"step {i}"):
                    pass
        except BaseException as exc:
            failures.append(exc)

    tracer.start_span("first").end()
    collector.wait_for(lambda c: c.arrived, "the first export")  # the export thread is stuck
    thread = threading.Thread(target=agent)
    thread.start()
    thread.join(WAIT_S)  # bounds a hang; measures nothing
    assert not thread.is_alive() and failures == []
    # What did not fit in the queue was dropped and counted, starts before ends.
    assert processor.dropped_starts > processor.dropped_ends > 0

    collector.release()
    assert processor.force_flush()
    steps = [s for s, _ in collector.spans() if s.name.startswith("step ")]
    assert 0 < len(steps) <= 8  # at most a queue's worth waited


def test_when_starts_fill_the_queue_an_end_still_finds_room(
    collector: Collector, provider: TracerProvider
) -> None:
    processor = small_queue_held(collector, provider)
    tracer = provider.get_tracer("test")
    agent = tracer.start_span("invoke_agent a")
    collector.wait_for(lambda c: c.arrived, "the agent's start")  # sent; the export hangs
    steps = [tracer.start_span(f"step {i}") for i in range(20)]
    agent.end()  # a start that was sent: without its end it would stay "running"

    assert (processor.dropped_starts, processor.dropped_ends) == (20 - 6, 0)
    collector.release()
    assert processor.force_flush()
    sent = [(s.name, s.end_time_unix_nano > 0) for s, _ in collector.spans()]
    assert sent[0] == ("invoke_agent a", False) and sent[-1] == ("invoke_agent a", True)
    assert sent[1:-1] == [(f"step {i}", False) for i in range(6)]
    for step in steps:
        step.end()


def test_a_collector_that_is_not_there_costs_the_agent_nothing(
    provider: TracerProvider, monkeypatch: pytest.MonkeyPatch
) -> None:
    with Collector() as gone:
        url = gone.url  # a port nothing listens on once it is closed
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_TRACES_TIMEOUT", "0.2")  # the exporter's retries
    processor = install(endpoint=url, key=KEY, provider=provider)
    tracer = provider.get_tracer("test")
    with tracer.start_as_current_span("invoke_agent a"):
        pass
    assert processor.force_flush()
    assert processor.export_failures >= 1


def test_install_adds_to_the_global_sdk_provider_once(collector: Collector) -> None:
    code = (
        "from opentelemetry import trace\n"
        "from agentdash.otel import install\n"
        "first = install()\n"
        "assert install() is first\n"
        "provider = trace.get_tracer_provider()\n"
        "from opentelemetry.sdk.trace import TracerProvider\n"
        "assert isinstance(provider, TracerProvider)\n"
        "trace.get_tracer('t').start_span('hello').end()\n"
        "assert first.force_flush()\n"
    )
    env = {"AGENTDASH_URL": collector.url, "AGENTDASH_INGEST_KEY": KEY, "PATH": "/usr/bin:/bin"}
    env["OTEL_SERVICE_NAME"] = "shop-agent"
    done = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=WAIT_S
    )
    assert done.returncode == 0, done.stderr
    ((span, resource),) = collector.spans()[-1:]
    assert span.name == "hello" and resource["service.name"] == "shop-agent"
    assert collector.received[-1].headers["authorization"] == f"Bearer {KEY}"


def test_without_a_key_install_says_so(
    provider: TracerProvider, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(otel.KEY_ENV, raising=False)
    with pytest.raises(ValueError, match="AGENTDASH_INGEST_KEY"):
        install(endpoint="http://localhost:1", provider=provider)


@pytest.mark.parametrize(
    ("endpoint", "url"),
    [
        ("http://dash.example.com", "http://dash.example.com/v1/traces"),
        ("http://dash.example.com/", "http://dash.example.com/v1/traces"),
        ("https://dash.example.com/v1/traces", "https://dash.example.com/v1/traces"),
    ],
)
def test_traces_url(endpoint: str, url: str) -> None:
    assert traces_url(endpoint) == url


def test_it_imports_nothing_of_django_or_agentdash() -> None:
    code = (
        "import sys\n"
        "class Block:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name.split('.')[0] in ('django', 'channels', 'celery', 'runtime'):\n"
        "            raise ImportError('blocked: ' + name)\n"
        "sys.meta_path.insert(0, Block())\n"
        "import agentdash.otel\n"
        "agentdash.otel.install(key='k')\n"
        "print(sorted(m for m in sys.modules if m.startswith('agentdash')))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "['agentdash', 'agentdash.otel']"


def test_a_forked_child_streams_through_a_thread_of_its_own(collector: Collector) -> None:
    code = (
        "import os\n"
        "from opentelemetry.sdk.trace import TracerProvider\n"
        "from agentdash.otel import install\n"
        "provider = TracerProvider()\n"
        f"processor = install(endpoint={collector.url!r}, key='k', provider=provider)\n"
        "tracer = provider.get_tracer('t')\n"
        "tracer.start_span('parent').end()\n"
        "pid = os.fork()\n"
        "if pid == 0:\n"
        "    tracer.start_span('child').end()\n"
        "    os._exit(0 if processor.force_flush() else 3)\n"
        "assert os.waitpid(pid, 0)[1] == 0\n"
        "assert processor.force_flush()\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=WAIT_S
    )
    assert done.returncode == 0, done.stderr
    assert sorted(s.name for s, _ in collector.spans()) == ["child", "parent"]
