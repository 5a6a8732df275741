"""Trace exports read in a decoding process of their own (``agentdash.ingest.decoders``):
what comes back is what reading them in the serving process gives — hostile values too —
a body that cannot be read is refused the same way, a decoding process killed loses no
export, and one whose server is killed does not outlive it."""

from __future__ import annotations

import os
import select
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client
from prometheus_client import REGISTRY

from agentdash.ingest import decoders as decoders_module
from agentdash.ingest.decoders import Decoders
from agentdash.ingest.keys import ingest_key_create
from agentdash.ingest.otlp_decode import IngestRefused
from agentdash.ingest.prepared import Prepared, prepare
from agentdash.spans.models import Span
from tests.agentdash.ingest.otlp_bodies import (
    JSON,
    PROTOBUF,
    every_field_request,
    json_of,
    request_of,
    span,
)

# Every test here starts a Python of its own (a decoding process, a server): seconds, whichever
# test of the module starts the one they share.
pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[3]
TRACE = "0af7651916cd43dd8448eb211c80319c"
STARTED_WITHIN_S = 60.0
CHARS = 1_000


def started() -> Decoders:
    pool = Decoders()
    assert pool.started(1, timeout=STARTED_WITHIN_S), "the decoding process did not start"
    return pool


@pytest.fixture(scope="module")
def decoders() -> Iterator[Decoders]:
    """One decoding process for the module's tests that leave it running (a start: ~1 s)."""
    pool = started()
    yield pool
    pool.stop()


@pytest.fixture
def own_decoders() -> Iterator[Decoders]:
    pool = started()
    yield pool
    pool.stop()


def read_where(where: str) -> float:
    """Exports this process has read so far, by where (its metric)."""
    return REGISTRY.get_sample_value("agentdash_ingest_exports_read_total", {"where": where}) or 0


def hostile_json() -> bytes:
    """An export in OTLP/JSON carrying what protobuf cannot: a NUL and a lone surrogate,
    escaped, beside a value over the size cap and deep nesting."""
    body = request_of(
        span(TRACE, "00f067aa0ba902b7", "invoke_agent shopper", gen_ai__conversation__id="c1",
             note="HOSTILE", big="x" * (CHARS * 3), deep=[[[[["down"]]]]]),
        span(TRACE, "00f067aa0ba902b8", "chat model", parent="00f067aa0ba902b7",
             gen_ai__operation__name="chat", gen_ai__usage__input_tokens=3),
    )  # fmt: skip
    return json_of(body).replace(b'"HOSTILE"', b'"a\\u0000b\\ud800c"')


def read_here(data: bytes, kind: str) -> Prepared:
    return prepare(data, kind, max_value_chars=CHARS)


def read_there(pool: Decoders, data: bytes, kind: str, *, alone: bool = False) -> Prepared:
    return pool.prepared(data, kind, max_value_chars=CHARS, processes=1, alone=alone)


@pytest.mark.parametrize(
    ("data", "kind"),
    [
        (every_field_request().SerializeToString(), PROTOBUF),
        (hostile_json(), JSON),
    ],
    ids=["every-field-protobuf", "hostile-json"],
)
def test_an_export_read_in_the_decoding_process_is_what_reading_it_here_gives(
    decoders: Decoders, data: bytes, kind: str
) -> None:
    before = read_where("decoder")
    there, here = read_there(decoders, data, kind), read_here(data, kind)
    assert read_where("decoder") == before + 1
    assert there.unpacked == here.unpacked
    assert there.versions == here.versions
    assert [v.attributes_json for v in there.versions] == [v.attributes_json for v in here.versions]
    assert len(here.versions) >= 2


def test_an_export_read_in_halves_here_and_there_is_the_whole_in_its_order(
    decoders: Decoders,
) -> None:
    """With no other export in hand the serving process reads the first half itself: the
    halves joined are the whole — spans, their sources, rejections and their reasons in the
    order sent."""
    message = every_field_request()
    bad = span(TRACE, "00f067aa0ba902c1", "bad ids")
    bad.trace_id = b"\0" * 16  # all zeros: rejected, said
    message.resource_spans[0].scope_spans[0].spans.append(bad)
    data = message.SerializeToString()
    halves, whole = read_there(decoders, data, PROTOBUF, alone=True), read_here(data, PROTOBUF)
    assert halves.unpacked == whole.unpacked and halves.versions == whole.versions
    assert (
        whole.unpacked.rejected == 1 and "trace_id must be 16 bytes" in whole.unpacked.problems[0]
    )
    assert [s.source for s in halves.unpacked.spans] == [s.source for s in whole.unpacked.spans]


def test_the_hostile_values_came_back_storable(decoders: Decoders) -> None:
    root = read_there(decoders, hostile_json(), JSON).versions[0]
    assert root.attributes["note"] == "a\ufffdb\ufffdc"  # NUL and lone surrogate replaced
    assert root.attributes["big"].endswith("…[cut]")
    assert "\\u0000" not in (root.attributes_json or "")


def test_a_body_that_cannot_be_read_is_refused_as_here(decoders: Decoders) -> None:
    with pytest.raises(IngestRefused) as there:
        read_there(decoders, b"\xff\xff\xff not protobuf", PROTOBUF)
    with pytest.raises(IngestRefused) as here:
        read_here(b"\xff\xff\xff not protobuf", PROTOBUF)
    assert (there.value.status, there.value.message) == (here.value.status, here.value.message)
    assert there.value.status == 400
    assert decoders.pids()  # a refusal does not cost the process


def test_a_killed_decoding_process_loses_no_export_and_is_replaced(
    own_decoders: Decoders, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    decoders = own_decoders
    [first] = decoders.pids()
    os.kill(first, signal.SIGKILL)
    data = every_field_request().SerializeToString()
    assert read_there(decoders, data, PROTOBUF).versions == read_here(data, PROTOBUF).versions
    assert "a decoding process stopped" in caplog.text
    assert decoders.pids() == []  # read here meanwhile, until RETRY_S has passed
    monkeypatch.setattr(decoders_module, "RETRY_S", 0.0)
    read_there(decoders, data, PROTOBUF)  # starts new ones
    [second] = decoders.started(1, timeout=STARTED_WITHIN_S)
    assert second != first


def test_no_decoding_process_outlives_its_killed_server() -> None:
    script = (
        "import django, sys\n"
        "django.setup()\n"
        "from agentdash.ingest.decoders import Decoders\n"
        "pids = Decoders().started(1, timeout=60)\n"
        "print(pids[0], flush=True)\n"
        "sys.stdin.read()\n"
    )
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "agentdash.settings"}
    server = subprocess.Popen(
        [sys.executable, "-c", script],
        cwd=ROOT,
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert server.stdout is not None
        child = int(server.stdout.readline())
        assert _alive(child)
        watch = os.pidfd_open(child)  # readable once the process has ended
        server.kill()
        server.wait(timeout=30)
        ended = select.poll()
        ended.register(watch, select.POLLIN)
        try:
            assert ended.poll(30_000), "the decoding process outlived its server"
        finally:
            os.close(watch)
        assert not _alive(child)
    finally:
        server.kill()


def _alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"  # a zombie has exited


@pytest.mark.django_db
def test_an_export_posted_while_the_decoding_process_runs_is_read_there_and_stored(
    monkeypatch: pytest.MonkeyPatch, decoders: Decoders, settings: Any
) -> None:
    settings.AGENTDASH = {**getattr(settings, "AGENTDASH", {}), "INGEST_DECODE_PROCESSES": 1}
    monkeypatch.setattr("agentdash.ingest.receive.decoders", decoders)
    before = read_where("split")  # alone in hand: read half here, half there
    owner = User.objects.create_user("dana")
    key = ingest_key_create(name="t", project="shop", owner=owner, actor=None)[1]
    body = request_of(
        span(TRACE, "00f067aa0ba902b7", "invoke_agent shopper", gen_ai__conversation__id="c1"),
    ).SerializeToString()
    answer = Client().post(
        "/v1/traces", data=body, content_type=PROTOBUF, HTTP_AUTHORIZATION=f"Bearer {key}"
    )
    assert answer.status_code == 200
    assert read_where("split") == before + 1
    stored = Span.objects.get(trace_id=TRACE, span_id="00f067aa0ba902b7")
    assert stored.session.owner == owner
