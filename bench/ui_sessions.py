"""Big sessions for the session page's benchmark (``bench/ui.py``) and its browser tests,
made through the app's own services — never raw SQL — so they are stored exactly as a real
session is: every write recorded as a change of its session (the page's snapshot seq and its
span pages are right), event html rendered and sanitized when the event is stored.

  .venv/bin/python bench/ui_sessions.py spans  --count 50000 --owner alice [--per-run 500]
                                               [--failed N] [--cancelled N] [--seed S]
  .venv/bin/python bench/ui_sessions.py events --count 10000 --owner alice [--seed S]
  .venv/bin/python bench/ui_sessions.py serve   # one request a line on stdin, as below

``serve`` keeps one process for many sessions (Django set up once, which costs seconds of
CPU a process): each line on stdin is a JSON list of the other commands' arguments (e.g.
``["events", "--count", "120"]``); each answer is one line on stdout, ``{"made": …}`` or
``{"error": "<traceback>"}``. It ends at the end of its input.

It runs against whatever database the environment names (``DATABASE_URL``, as the server it
is meant for: the browser tests pass the live server's environment) and prints one JSON
object: the session's id and page path, what it holds, and a few landmarks (its last span,
its runs) for tests to look for.

- **spans**: runs of about ``--per-run`` spans each, as the runtime traces them
  (``bench/ui_traces.py``): an ``invocation`` span, the root agent under it, and its loop of
  model calls and tool calls, each with its callbacks; every twelfth tool is an agent used as
  a tool (a nested agent with its own steps). Attributes as the runtime writes them (GenAI
  conventions and ours, captured content); a tool fails now and then (an error span with its
  exception event, recovered); ``--failed`` runs end with a model error, ``--cancelled`` runs
  are stopped part-way (their open spans end ``CancelledError``, as when the worker cancels
  the agent). Each run goes through the run services (queued, claimed, its trace,
  concluded, the chat told), its spans through the span store's batch write
  (``spans_store``), its user message and answer through the session service.
- **events**: turns of four chat events (the user's question, the agent's tool call, the
  tool's result, the agent's answer in Markdown — some of it hostile markup), each turn a
  run, appended through the session service.

Runs are never executed: the process pins an executor that only holds the ids it is given.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
for path in (ROOT, ROOT / "bench"):
    if str(path) not in sys.path:
        sys.path.insert(0, str(path))

from ui_traces import AGENT, CAPITALS, COUNTRIES, STOP_ERRORS, Trace  # noqa: E402

BATCH = 2_000  # span versions per spans_store call (the live pipeline's batches are smaller)
HOSTILE = '<img src=x onerror="window.__xss=1"><script>window.__xss=2</script>'


def django_setup() -> None:
    """Set Django up for this process (the settings the environment names)."""
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "agentdash.settings")
    import django

    django.setup()


class HeldExecutor:
    """Takes run ids and runs nothing: the generated runs are written, never executed."""

    name = "held"

    def submit(self, run_id: int) -> None:
        pass

    async def astart(self) -> None:
        pass


# ── Sessions ────────────────────────────────────────────────────────────────────────────────
def _owner(username: str) -> Any:
    from django.contrib.auth import get_user_model

    return get_user_model().objects.get(username=username)


def _session_for(owner: Any, title: str) -> Any:
    from agentdash.agent_sessions.services import session_create

    return session_create(app_name=AGENT, user_id=str(owner.pk), owner=owner, title=title)


def _text_message(text: str) -> Any:
    from google.genai import types

    return types.Content(role="user", parts=[types.Part(text=text)])


def _run_start(session: Any, owner: Any, question: str) -> Any:
    """A run through the run services: queued (held, never executed), then claimed."""
    from agentdash.runs.lifecycle import run_claim
    from agentdash.runs.services import run_enqueue

    queued = run_enqueue(
        session=session, agent_name=AGENT, message=_text_message(question), requested_by=owner
    )
    run = run_claim(run_id=queued.pk, worker="ui-sessions:0")
    assert run is not None, "a run just queued could not be claimed"
    return run


def _append(session_rt: Any, **event: Any) -> None:
    from agentdash.agent_sessions.session_service import DjangoSessionService
    from runtime.events.event import Event

    DjangoSessionService().append_event(session_rt, Event(**event))


def _runtime_session(session: Any) -> Any:
    from agentdash.agent_sessions.session_service import DjangoSessionService
    from runtime.sessions.base_session_service import GetSessionConfig

    return DjangoSessionService().get_session(
        app_name=session.app_name,
        user_id=session.user_id,
        session_id=session.id,
        config=GetSessionConfig(num_recent_events=0),
    )


def _spread(total: int, parts: int) -> list[int]:
    base, extra = divmod(total, parts)
    return [base + (1 if i < extra else 0) for i in range(parts)]


def _chosen(runs: int, count: int, offset: float) -> set[int]:
    """``count`` run indexes spread through the session (never the last run)."""
    if runs < 2 or count < 1:
        return set()
    return {min(runs - 2, int((i + offset) * (runs - 1) / count)) for i in range(count)}


def spans_session(
    *,
    owner: str,
    count: int,
    per_run: int = 500,
    failed: int | None = None,
    cancelled: int | None = None,
    seed: int = 10,
) -> dict[str, Any]:
    """A session of ``count`` spans in runs of about ``per_run`` (module docstring)."""
    from agentdash.runs.executors import executor_set
    from agentdash.runs.lifecycle import run_cancel_message, run_conclude, run_trace_set
    from agentdash.runs.models import Run
    from agentdash.runs.services import run_cancel_request
    from agentdash.spans.services import spans_store

    user = _owner(owner)
    executor_set(HeldExecutor())
    session = _session_for(user, f"{count:,} spans")
    rng = random.Random(seed)  # the same shapes every time
    ids = random.Random(session.id)  # ids of the session's own
    session_rt = _runtime_session(session)
    runs = max(1, round(count / per_run))
    share = max(runs // 20, 1 if runs >= 3 else 0)  # by default 5% of the runs each
    failed_at = _chosen(runs, share if failed is None else failed, 0.66)
    cancelled_at = _chosen(runs, share if cancelled is None else cancelled, 0.33)
    cancelled_at -= failed_at
    sizes = _spread(count, runs)
    # Runs of about a minute each, a little apart, ending about now.
    t = time.time_ns() - runs * 15 * 60 * 1_000_000_000
    landmarks: dict[str, Any] = {"runs": []}
    stored = 0
    carry = 0  # spans a stopped run did not make: the next runs make them
    for index, planned in enumerate(sizes):
        size = planned + carry
        country = COUNTRIES[index % len(COUNTRIES)]
        question = f"Run {index + 1}: what are the capitals of {country} and its neighbours?"
        run = _run_start(session, user, question)
        trace = Trace(rng, session.id, run.pk, run.invocation_id, budget=size, ids=ids)
        if index in cancelled_at or index in failed_at:
            trace.stop_kind = "cancelled" if index in cancelled_at else "failed"
            trace.stop_at = int(size * rng.uniform(0.3, 0.6))
        run_trace_set(run=run, trace_id=trace.trace_id)
        _append(
            session_rt,
            author="user",
            invocation_id=run.invocation_id,
            content=_text_message(question),
            timestamp=t / 1e9,
        )
        end = trace.invocation(t, app_name=AGENT, user_id=str(user.pk))
        trace.spans.sort(key=lambda v: (v.start_time, v.span_id))
        for at in range(0, len(trace.spans), BATCH):
            writes = spans_store(versions=trace.spans[at : at + BATCH])
            if not all(write.stored for write in writes):  # an id taken by another session
                raise RuntimeError(f"run {run.pk}: some spans were not stored")
        stored += len(trace.spans)
        carry = size - len(trace.spans)
        if trace.ended_by == "cancelled":
            reason = "taking too long"
            run_cancel_request(run=Run.objects.get(pk=run.pk), actor=user, reason=reason)
            message = run_cancel_message(reason)
            run_conclude(
                run=run,
                status=Run.Status.CANCELLED,
                error=message,
                trace_id=trace.trace_id,
                report=("CANCELLED", message),
            )
        elif trace.ended_by == "failed":
            error = "ModelCallError: 503 UNAVAILABLE: the model is overloaded; try again later"
            run_conclude(
                run=run,
                status=Run.Status.FAILED,
                error=error,
                trace_id=trace.trace_id,
                report=("MODEL_ERROR", f"The run failed: {error}"),
            )
        else:
            _append(
                session_rt,
                author=AGENT,
                invocation_id=run.invocation_id,
                timestamp=end / 1e9,
                content=_answer(index, country),
                turn_complete=True,
            )
            run_conclude(run=run, status=Run.Status.SUCCEEDED, trace_id=trace.trace_id)
        stopped = [  # the spans the cancel or the failure ended (error spans it passed through)
            v.span_id
            for v in trace.spans
            if v.status == "error" and v.status_message.startswith(STOP_ERRORS)
        ]
        landmarks["runs"].append(
            {
                "stopped_spans": stopped,
                "id": run.pk,
                "status": trace.ended_by or "succeeded",
                "spans": len(trace.spans),
                "trace_id": trace.trace_id,
            }
        )
        t = end + rng.randint(30, 600) * 1_000_000_000
    landmarks.update(_span_landmarks(session.id))
    return {
        "session_id": session.id,
        "path": f"/sessions/{session.id}/",
        "spans": stored,
        **landmarks,
    }


def _answer(index: int, country: str) -> Any:
    from google.genai import types

    text = (
        f"**{CAPITALS[country]}** is the capital of {country}.\n\n"
        f"- checked with `get_capital_city`\n- run {index + 1}\n\n(checked by after_model)"
    )
    return types.Content(role="model", parts=[types.Part(text=text)])


def _span_landmarks(session_id: str) -> dict[str, Any]:
    """The session's first and last span in the page's order (start, then id), its first
    root, its last tool call, its last failed span and how many failed, for tests to find."""
    from agentdash.spans.models import Span

    spans = Span.objects.filter(session_id=session_id).order_by("start_time", "id")
    fields = ("trace_id", "span_id", "name", "parent_span_id", "status", "status_message")

    # Failed, not cancelled (a cancelled span may carry an error status: it reads "cancelled").
    failed = spans.filter(status="error").exclude(attributes__has_key="agentdash.cancelled")

    def one(rows: Any) -> dict[str, Any] | None:
        found = rows.values(*fields, "attributes").first()
        if found is None:
            return None
        attributes = found.pop("attributes")
        found["tool_call_id"] = attributes.get("gen_ai.tool.call.id", "")
        found["callback_name"] = attributes.get("agentdash.callback.name", "")
        found["agent_name"] = attributes.get("gen_ai.agent.name", "")
        return found

    return {
        "first_span": one(spans),
        "last_span": one(spans.reverse()),
        "first_root": one(spans.filter(parent_span_id="")),
        "last_tool": one(spans.filter(name__startswith="execute_tool").reverse()),
        "last_error": one(failed.reverse()),
        "roots": spans.filter(parent_span_id="").count(),
        "errors": failed.count(),
    }


# ── Chat ────────────────────────────────────────────────────────────────────────────────────
QUESTIONS = [
    "What is the capital of {c}?",
    "And {c}? Please answer in a short list, with the population if you know it.",
    "Compare the capital of {c} with Paris: which is older? Use a table.",
    "Capital of {c} " + HOSTILE + " — is that right?",
    "Show me how to call `get_capital_city` for {c} in Python.",
]


def _turn_events(rng: random.Random, turn: int, agent: str) -> Iterator[dict[str, Any]]:
    from google.genai import types

    country = COUNTRIES[turn % len(COUNTRIES)]
    capital = CAPITALS[country]
    call_id = f"call-{rng.getrandbits(48):012x}"
    question = QUESTIONS[turn % len(QUESTIONS)].format(c=country)
    yield {
        "author": "user",
        "content": types.Content(role="user", parts=[types.Part(text=question)]),
    }
    call = types.FunctionCall(id=call_id, name="get_capital_city", args={"country": country})
    yield {
        "author": agent,
        "content": types.Content(role="model", parts=[types.Part(function_call=call)]),
    }
    response = types.FunctionResponse(
        id=call_id, name="get_capital_city", response={"result": capital}
    )
    yield {
        "author": agent,
        "content": types.Content(role="user", parts=[types.Part(function_response=response)]),
    }
    answer = [
        f"The capital of **{country}** is **{capital}**. (turn {turn + 1})",
        "",
        f"| country | capital |\n| --- | --- |\n| {country} | {capital} |",
        "",
        f"```python\nget_capital_city(country={country!r})  # -> {capital!r}\n```",
        "",
        f"- asked: _{question[:60]}_",
        "- source: [the offline atlas](https://example.org/atlas)",
        "",
        "(checked by after_model)",
    ]
    text = "\n".join(answer if turn % 3 else answer[:1] + answer[-2:])
    yield {
        "author": agent,
        "content": types.Content(role="model", parts=[types.Part(text=text)]),
        "turn_complete": True,
    }


def events_session(*, owner: str, count: int, seed: int = 10) -> dict[str, Any]:
    """A session of ``count`` chat events in turns of four, one run per turn."""
    from agentdash.runs.executors import executor_set
    from agentdash.runs.lifecycle import run_conclude

    user = _owner(owner)
    executor_set(HeldExecutor())
    session = _session_for(user, f"{count:,} events")
    rng = random.Random(seed)
    session_rt = _runtime_session(session)
    t = time.time() - count * 3.0
    appended, turn, last_text = 0, 0, ""
    while appended < count:
        events = list(_turn_events(rng, turn, AGENT))[: count - appended]
        question = events[0]["content"].parts[0].text
        run = _run_start(session, user, question)
        for event in events:
            t += rng.uniform(0.3, 4.0)
            if event["content"].parts[0].text:
                last_text = event["content"].parts[0].text
            _append(session_rt, invocation_id=run.invocation_id, timestamp=t, **event)
            appended += 1
        run_conclude(run=run, status="succeeded")
        turn += 1
    return {
        "session_id": session.id,
        "path": f"/sessions/{session.id}/",
        "events": appended,
        "turns": turn,
        "last_text": last_text,
    }


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("what", choices=("spans", "events", "serve"))
    parser.add_argument("--count", type=int)
    parser.add_argument("--owner", default="alice")
    parser.add_argument("--per-run", type=int, default=500)
    parser.add_argument("--failed", type=int, default=None, help="failed runs (default: 5%%)")
    parser.add_argument("--cancelled", type=int, default=None, help="cancelled runs (5%%)")
    parser.add_argument("--seed", type=int, default=10)
    return parser


def _made(args: argparse.Namespace) -> dict[str, Any]:
    """The session ``args`` ask for (Django set up), with the seconds it took."""
    started = time.perf_counter()
    if args.what == "spans":
        found = spans_session(
            owner=args.owner,
            count=args.count,
            per_run=args.per_run,
            failed=args.failed,
            cancelled=args.cancelled,
            seed=args.seed,
        )
    else:
        found = events_session(owner=args.owner, count=args.count, seed=args.seed)
    found["seconds"] = round(time.perf_counter() - started, 2)
    return found


def _serve(parser: argparse.ArgumentParser) -> None:
    """One session a line of stdin, one answer a line of stdout (module docstring)."""
    import traceback

    from django.db import close_old_connections

    for line in sys.stdin:
        if not line.strip():
            continue
        try:
            argv = json.loads(line)
            if not isinstance(argv, list) or not all(isinstance(a, str) for a in argv):
                raise ValueError(f"a request is a JSON list of strings, not {line[:200]!r}")
            args = parser.parse_args(argv)
            if args.what == "serve" or args.count is None:
                raise ValueError(f"asked for {argv!r}: spans or events, with --count")
            answer: dict[str, Any] = {"made": _made(args)}
        except (Exception, SystemExit):  # argparse exits on bad arguments: an answer too
            answer = {"error": traceback.format_exc()}
        finally:
            close_old_connections()
        print(json.dumps(answer), flush=True)


def main(argv: list[str] | None = None) -> None:
    parser = _parser()
    args = parser.parse_args(argv)
    if args.what != "serve" and args.count is None:
        parser.error("--count is required")
    django_setup()
    if args.what == "serve":
        _serve(parser)
    else:
        print(json.dumps(_made(args)))


if __name__ == "__main__":
    main()
