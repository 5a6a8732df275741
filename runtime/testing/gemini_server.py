"""A local HTTP server that speaks the Gemini REST wire format, for tests of the real client.

Point ``google-genai`` (or :class:`runtime.models.gemini.Gemini`) at ``server.base_url`` and
script what the "model" answers::

    with FakeGeminiServer() as server:
        server.fail(status=429, retry_after=0)           # first call: 429 + Retry-After
        server.script("hello", {"name": "get_weather", "args": {"city": "Paris"}})
        ...
        assert server.requests[0].body["contents"][0]["parts"][0]["text"] == "hi"

Routes (as google-genai builds them): ``POST /{v1|v1beta}/models/{model}:generateContent``
answers one JSON ``GenerateContentResponse``; ``POST .../{model}:streamGenerateContent?alt=sse``
answers ``text/event-stream``, one ``data: {json}`` event per chunk. Errors have Google's shape:
``{"error": {"code": 429, "message": "...", "status": "RESOURCE_EXHAUSTED"}}``.

Each scripted reply is one of: a ``str`` (model text); a ``dict`` with ``name`` (and ``args``),
a function call; a ``list`` of those, the chunks of a streamed reply (merged into one reply
for a non-streaming call; a chunk ``dict`` with ``candidates`` or ``error`` is sent verbatim,
e.g. to fail mid-stream); a ``dict`` with ``candidates``, sent verbatim; or a fault queued by
:meth:`FakeGeminiServer.fail` / :meth:`FakeGeminiServer.stall`. Stdlib only.
"""

from __future__ import annotations

import json
import re
import threading
from collections import deque
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any
from urllib.parse import parse_qs, urlsplit

Reply = Any  # str | dict[str, Any] | list[str | dict[str, Any]] | Fault | Stall

_ROUTE = re.compile(r"^/(v1|v1beta)/models/([^/:]+):(generateContent|streamGenerateContent)$")
_STATUS_NAMES = {
    400: "INVALID_ARGUMENT",
    401: "UNAUTHENTICATED",
    403: "PERMISSION_DENIED",
    404: "NOT_FOUND",
    408: "DEADLINE_EXCEEDED",
    409: "ABORTED",
    429: "RESOURCE_EXHAUSTED",
    500: "INTERNAL",
    501: "NOT_IMPLEMENTED",
    502: "UNAVAILABLE",
    503: "UNAVAILABLE",
    504: "DEADLINE_EXCEEDED",
}


@dataclass(frozen=True)
class Fault:
    """An HTTP error reply, optionally with a ``Retry-After`` header and a ``RetryInfo`` body."""

    status: int
    message: str
    retry_after: float | None = None
    retry_delay_s: float | None = None


@dataclass(frozen=True)
class Stall:
    """Hold the request for ``seconds``, then drop the connection without answering."""

    seconds: float


@dataclass
class RecordedRequest:
    """One request as the server received it."""

    method: str
    path: str
    query: dict[str, str]
    headers: dict[str, str]  # lower-cased names
    body: Any

    @property
    def api_version(self) -> str:
        return self.path.split("/")[1]

    @property
    def model(self) -> str:
        match = _ROUTE.match(self.path)
        return match.group(2) if match else ""

    @property
    def stream(self) -> bool:
        return self.path.endswith(":streamGenerateContent")

    @property
    def system_text(self) -> str:
        """The system instruction's text parts, joined with newlines."""
        si = (self.body or {}).get("systemInstruction") or {}
        return "\n".join(p.get("text", "") for p in si.get("parts", []))

    @property
    def function_declarations(self) -> list[dict[str, Any]]:
        """Every function declaration of every tool, as sent."""
        tools = (self.body or {}).get("tools") or []
        return [d for t in tools for d in t.get("functionDeclarations", [])]


@dataclass
class FakeGeminiServer:
    """The server; use it as a context manager (or call :meth:`start` / :meth:`stop`)."""

    latency_s: float = 0.0
    chunk_delay_s: float = 0.0
    default_reply: Reply = None
    requests: list[RecordedRequest] = field(default_factory=list)
    _queue: deque[Reply] = field(default_factory=deque, init=False, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, init=False, repr=False)
    _closing: threading.Event = field(default_factory=threading.Event, init=False, repr=False)
    _httpd: ThreadingHTTPServer | None = field(default=None, init=False, repr=False)
    _thread: threading.Thread | None = field(default=None, init=False, repr=False)

    # -- scripting -------------------------------------------------------------------------

    def script(self, *replies: Reply) -> None:
        """Queue replies, answered one per request in order."""
        with self._lock:
            self._queue.extend(replies)

    def fail(
        self,
        status: int = 503,
        *,
        retry_after: float | None = None,
        times: int = 1,
        message: str | None = None,
        retry_delay_s: float | None = None,
    ) -> None:
        """Queue ``times`` error replies with HTTP ``status``.

        ``retry_after`` sets a ``Retry-After`` header (seconds); ``retry_delay_s`` adds a
        ``google.rpc.RetryInfo`` detail to the body, as the real API does on quota errors.
        """
        text = message or f"fake error {status} ({_STATUS_NAMES.get(status, 'UNKNOWN')})"
        self.script(*[Fault(status, text, retry_after, retry_delay_s) for _ in range(times)])

    def stall(self, seconds: float, *, times: int = 1) -> None:
        """Queue ``times`` requests that hang for ``seconds`` and then get no answer."""
        self.script(*[Stall(seconds) for _ in range(times)])

    @property
    def pending(self) -> int:
        """How many scripted replies are still queued."""
        with self._lock:
            return len(self._queue)

    # -- lifecycle -------------------------------------------------------------------------

    @property
    def base_url(self) -> str:
        if self._httpd is None:
            raise RuntimeError("FakeGeminiServer is not started; use it as a context manager")
        host, port = self._httpd.server_address[:2]
        return f"http://{host!s}:{port}"

    def start(self) -> FakeGeminiServer:
        self._closing.clear()
        httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
        httpd.daemon_threads = True
        httpd.fake = self  # type: ignore[attr-defined]
        self._httpd = httpd
        self._thread = threading.Thread(
            target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        self._closing.set()  # wakes handlers sleeping on latency or a stall
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)
        self._httpd = None
        self._thread = None

    def __enter__(self) -> FakeGeminiServer:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    # -- used by the handler ---------------------------------------------------------------

    def _record(self, request: RecordedRequest) -> None:
        with self._lock:
            self.requests.append(request)

    def _next_reply(self) -> Reply:
        with self._lock:
            if self._queue:
                return self._queue.popleft()
        if self.default_reply is not None:
            return self.default_reply
        return Fault(400, "FakeGeminiServer: no scripted reply left for this request")

    def _sleep(self, seconds: float) -> None:
        if seconds > 0:
            self._closing.wait(seconds)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "FakeGemini/1.0"

    def log_message(self, format: str, *args: Any) -> None:
        pass  # keep test output clean

    def do_POST(self) -> None:
        try:
            self._handle()
        except (BrokenPipeError, ConnectionResetError):  # the client gave up (timeout)
            self.close_connection = True

    def _handle(self) -> None:
        fake: FakeGeminiServer = self.server.fake  # type: ignore[attr-defined]
        url = urlsplit(self.path)
        raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        try:
            body = json.loads(raw) if raw else None
        except ValueError:
            body = None
        request = RecordedRequest(
            method="POST",
            path=url.path,
            query={k: v[-1] for k, v in parse_qs(url.query).items()},
            headers={k.lower(): v for k, v in self.headers.items()},
            body=body,
        )
        fake._record(request)
        match = _ROUTE.match(url.path)
        if match is None:
            self._send_error(Fault(404, f"no such route: POST {url.path}"))
            return
        if not isinstance(body, dict) or not body.get("contents"):
            self._send_error(Fault(400, "request body must be JSON with non-empty 'contents'"))
            return
        stream = match.group(3) == "streamGenerateContent"
        if stream and request.query.get("alt") != "sse":
            self._send_error(Fault(400, "this fake streams only with ?alt=sse"))
            return
        reply = fake._next_reply()
        fake._sleep(fake.latency_s)
        if isinstance(reply, Stall):
            fake._sleep(reply.seconds)
            self.close_connection = True
            return
        if isinstance(reply, Fault):
            self._send_error(reply)
            return
        try:
            chunks = _to_chunks(reply, model=match.group(2), prompt_tokens=_count_tokens(body))
        except (TypeError, ValueError) as err:  # a bad script: fail the call, visibly
            self._send_error(Fault(400, f"FakeGeminiServer: bad scripted reply: {err}"))
            return
        if not stream:
            self._send_json(200, _merge(chunks) if len(chunks) > 1 else chunks[0])
            return
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        for i, chunk in enumerate(chunks):
            if i:
                fake._sleep(fake.chunk_delay_s)
            self._write_chunk(f"data: {json.dumps(chunk)}\r\n\r\n".encode())
        self._write_chunk(b"")

    def _write_chunk(self, data: bytes) -> None:
        self.wfile.write(f"{len(data):X}\r\n".encode() + data + b"\r\n")
        self.wfile.flush()

    def _send_json(self, status: int, payload: Any, headers: dict[str, str] | None = None) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json; charset=UTF-8")
        self.send_header("Content-Length", str(len(data)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)

    def _send_error(self, fault: Fault) -> None:
        error: dict[str, Any] = {
            "code": fault.status,
            "message": fault.message,
            "status": _STATUS_NAMES.get(fault.status, "UNKNOWN"),
        }
        if fault.retry_delay_s is not None:
            error["details"] = [
                {
                    "@type": "type.googleapis.com/google.rpc.RetryInfo",
                    "retryDelay": f"{fault.retry_delay_s:g}s",
                }
            ]
        headers = {}
        if fault.retry_after is not None:
            headers["Retry-After"] = f"{fault.retry_after:g}"
        self._send_json(fault.status, {"error": error}, headers)


def _count_tokens(body: dict[str, Any]) -> int:
    """A stand-in token count: words of every text part of the request."""
    contents = [*body.get("contents", []), body.get("systemInstruction") or {}]
    words = sum(len(p.get("text", "").split()) for c in contents for p in c.get("parts", []))
    return max(words, 1)


def _part(item: str | dict[str, Any]) -> dict[str, Any]:
    if isinstance(item, str):
        return {"text": item}
    if isinstance(item, dict) and "name" in item:
        return {"functionCall": {"name": item["name"], "args": item.get("args", {})}}
    raise TypeError(f"a reply chunk must be a str or a dict with 'name'; got {item!r}")


def _to_chunks(reply: Reply, *, model: str, prompt_tokens: int) -> list[dict[str, Any]]:
    """The reply as GenerateContentResponse JSON chunks; only the last says finishReason."""
    if isinstance(reply, dict) and "name" not in reply:
        return [reply]  # a raw GenerateContentResponse
    items = reply if isinstance(reply, list) else [reply]
    if not items:
        raise ValueError("a streamed reply needs at least one chunk")
    chunks, produced = [], 0
    for i, item in enumerate(items):
        if isinstance(item, dict) and ("candidates" in item or "error" in item):
            chunks.append(item)  # a raw chunk, e.g. an error in the middle of a stream
            continue
        part = _part(item)
        produced += len(part.get("text", "").split()) or (0 if "text" in part else 1)
        candidate: dict[str, Any] = {"content": {"role": "model", "parts": [part]}, "index": 0}
        if i == len(items) - 1:
            candidate["finishReason"] = "STOP"
        chunks.append(
            {
                "candidates": [candidate],
                "usageMetadata": {
                    "promptTokenCount": prompt_tokens,
                    "candidatesTokenCount": produced,
                    "totalTokenCount": prompt_tokens + produced,
                },
                "modelVersion": model,
                "responseId": f"fake-{id(reply):x}",
            }
        )
    return chunks


def _merge(chunks: list[dict[str, Any]]) -> dict[str, Any]:
    """Chunks of one reply as a single response: adjacent text parts joined."""
    with_candidates = [c for c in chunks if c.get("candidates")]
    if not with_candidates:
        return chunks[-1]
    parts: list[dict[str, Any]] = []
    for chunk in with_candidates:
        for part in chunk["candidates"][0].get("content", {}).get("parts", []):
            if "text" in part and parts and "text" in parts[-1]:
                parts[-1] = {"text": parts[-1]["text"] + part["text"]}
            else:
                parts.append(dict(part))
    last = with_candidates[-1]
    content = {"role": "model", "parts": parts}
    return {**last, "candidates": [{**last["candidates"][0], "content": content}]}
