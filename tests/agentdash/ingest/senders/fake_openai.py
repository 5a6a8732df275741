"""An OpenAI-compatible chat endpoint on 127.0.0.1, for the sender apps (standard library
only: it runs in their venvs). ``POST /v1/chat/completions`` answers a conversation whose last
message is the user's with one call of ``get_weather`` (``{"city": "Paris"}``), and one whose
last message is a tool's with text; streamed (``"stream": true``) as server-sent events.
Usage: 52 input / 18 output tokens, then 70 / 9."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, HTTPServer
from typing import Any

MODEL = "gpt-4o-mini-2024-07-18"
SYSTEM = "You answer questions about the weather."
QUESTION = "What is the weather in Paris?"
TOOLS = [{"type": "function", "function": {
    "name": "get_weather", "description": "The weather in a city now.",
    "parameters": {"type": "object", "properties": {"city": {"type": "string"}},
                   "required": ["city"]}}}]  # fmt: skip
"""The one tool the apps declare, in OpenAI's shape."""
CALL_ID = "call_Wx9pQ2weather"
ANSWER = "It is sunny in Paris, 21 °C."


def _answer(request: dict[str, Any]) -> tuple[dict[str, Any], dict[str, int]]:
    messages = request.get("messages") or []
    last = messages[-1] if messages else {}
    if last.get("role") == "tool":
        answer = {"role": "assistant", "content": ANSWER}
        return answer, {"prompt_tokens": 70, "completion_tokens": 9}
    call = {
        "id": CALL_ID,
        "type": "function",
        "function": {"name": "get_weather", "arguments": json.dumps({"city": "Paris"})},
    }
    return (
        {"role": "assistant", "content": None, "tool_calls": [call]},
        {"prompt_tokens": 52, "completion_tokens": 18},
    )


class _Handler(BaseHTTPRequestHandler):
    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", "0"))) or b"{}")
        if not self.path.rstrip("/").endswith("/chat/completions"):
            self.send_error(404)
            return
        message, usage = _answer(body)
        usage["total_tokens"] = usage["prompt_tokens"] + usage["completion_tokens"]
        finish = "tool_calls" if message.get("tool_calls") else "stop"
        common = {
            "id": "chatcmpl-fake1",
            "created": 1_700_000_000,
            "model": MODEL,
            "system_fingerprint": "fp_fake",
        }
        if body.get("stream"):
            self._stream(common, message, usage, finish)
            return
        payload = {
            **common,
            "object": "chat.completion",
            "usage": usage,
            "choices": [
                {"index": 0, "message": message, "finish_reason": finish, "logprobs": None}
            ],
        }
        data = json.dumps(payload).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _stream(
        self, common: dict[str, Any], message: dict[str, Any], usage: dict[str, int], finish: str
    ) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.end_headers()
        delta: dict[str, Any] = {"role": "assistant"}
        if message.get("tool_calls"):
            delta["tool_calls"] = [{**message["tool_calls"][0], "index": 0}]
        else:
            delta["content"] = message["content"]
        chunks = [
            {"index": 0, "delta": delta, "finish_reason": None},
            {"index": 0, "delta": {}, "finish_reason": finish},
        ]
        for choice in chunks:
            event = {**common, "object": "chat.completion.chunk", "choices": [choice]}
            self.wfile.write(f"data: {json.dumps(event)}\n\n".encode())
        last = {**common, "object": "chat.completion.chunk", "choices": [], "usage": usage}
        self.wfile.write(f"data: {json.dumps(last)}\n\ndata: [DONE]\n\n".encode())

    def log_message(self, format: str, *args: object) -> None:
        pass


def serve() -> str:
    """Start the endpoint in a daemon thread; its base URL (``http://127.0.0.1:<port>/v1``)."""
    server = HTTPServer(("127.0.0.1", 0), _Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return f"http://127.0.0.1:{server.server_address[1]}/v1"
