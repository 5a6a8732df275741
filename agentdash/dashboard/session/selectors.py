"""Reads for the dashboard's pages: what the session page hands its scripts."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any
from urllib.parse import quote, urlencode

from django.urls import reverse

from agentdash.agent_sessions.ids import session_id_in_url
from agentdash.agent_sessions.selectors import (
    session_events_page,
    session_list_for_user,
    session_state_view,
)
from agentdash.changes.selectors import session_last_seq
from agentdash.controls.selectors import callback_settings_snapshot
from agentdash.core.permissions import can_edit_state, is_operator
from agentdash.registry.loader import AgentNotRegisteredError
from agentdash.registry.selectors import agent_callbacks, agent_get, agent_model_of
from agentdash.remote.selectors import is_connected, remote_callbacks, remote_processes_of
from agentdash.runs.selectors import session_runs_latest
from agentdash.scores.selectors import feedback_enabled
from agentdash.spans.selectors import link_sessions
from agentdash.spans.summaries import span_count
from agentdash.spans.totals import session_usage
from runtime import LlmAgent
from runtime.telemetry.attributes import CONTENT_CAPTURE

if TYPE_CHECKING:
    from agentdash.agent_sessions.models import AgentSession

BUILT_IN_SLOT = "built-in"


def session_ws_path(*, session_id: str) -> str:
    """The websocket path of a session (docs/PROTOCOL.md): its id as the ``session_id``
    route converter writes it (agentdash.agent_sessions.ids), then percent-encoded for the
    URL — ids of the alphabet unchanged, ``a/b`` as ``a%252Fb``."""
    return f"/ws/sessions/{quote(session_id_in_url(session_id), safe=':')}/"


def session_callback_switches(*, session: AgentSession) -> list[dict[str, Any]]:
    """The callbacks of the session's agent tree (``agent_callbacks``), plus the built-in
    content-capture switch of each LLM agent, each with the switches set for it:
    ``global`` and ``session`` (``True``/``False``, or ``None`` when unset) and ``enabled``,
    what applies to this session (the session's switch, else the global one, else on).

    An agent that runs elsewhere offers the callbacks its latest process registered
    (``remote``); an agent that is no longer configured has none to offer: ``[]``."""
    try:
        root = agent_get(name=session.app_name)
    except AgentNotRegisteredError:
        if not session.is_external:
            return []
        return _with_switches(
            session, remote_callbacks(owner_id=session.owner_id, project=session.app_name)
        )
    callbacks = agent_callbacks(name=session.app_name)
    llm_agents = [agent.name for agent in root.walk() if isinstance(agent, LlmAgent)]
    callbacks += [
        {"agent": name, "slot": BUILT_IN_SLOT, "name": CONTENT_CAPTURE, "style": BUILT_IN_SLOT}
        for name in llm_agents
    ]
    return _with_switches(session, callbacks)


def session_remote_processes(*, session: AgentSession) -> list[dict[str, Any]]:
    """For an external session: the processes of its app that registered with AgentDash
    (``agentdash.client``), the latest heard from first, each with ``connected`` (heard from
    within ``remote.selectors.CONNECTED_S``); ``[]`` for a local session."""
    if not session.is_external:
        return []
    return [
        {
            "root_agent": process.root_agent,
            "host": process.host,
            "pid": process.pid,
            "versions": ", ".join(f"{k} {v}" for k, v in sorted(process.versions.items())),
            "connected_at": process.connected_at,
            "last_seen": process.last_seen,
            "connected": is_connected(process),
        }
        for process in remote_processes_of(owner_id=session.owner_id, project=session.app_name)[:10]
    ]


def _with_switches(session: AgentSession, callbacks: list[dict[str, Any]]) -> list[dict[str, Any]]:
    switches = callback_settings_snapshot()
    out = []
    for callback in callbacks:
        on_global = switches.get((callback["name"], callback["agent"], None))
        on_session = switches.get((callback["name"], callback["agent"], session.id))
        effective = on_session if on_session is not None else on_global
        out.append(
            {
                **callback,
                "global": on_global,
                "session": on_session,
                "enabled": True if effective is None else effective,
            }
        )
    return out


def session_page_data(
    *, session: AgentSession, user: Any, snapshot: dict[str, Any]
) -> dict[str, Any]:
    """What the session page passes to its scripts (through ``json_script``).

    Everyone who may see the session gets its id, agent, model and websocket path; operators
    also get the agent's callback switches and, with the permission to edit state, the merged
    state and the version an edit is based on — those two taken from ``snapshot`` (what
    :func:`session_snapshot_data` read for this user), not read again."""
    model = agent_model_of(name=session.app_name)
    operator = is_operator(user)
    data: dict[str, Any] = {
        "session_id": session.id,
        "app_name": session.app_name,
        "model": model or "",
        "ws_path": session_ws_path(session_id=session.id),
        "data_path": reverse("dashboard:session", kwargs={"session_id": session.id}),
        "is_operator": operator,
        "can_edit_state": operator and can_edit_state(user),
        # The owner, or whoever may cancel runs (live.actions checks each request again).
        "can_cancel": bool(
            (session.owner_id is not None and session.owner_id == getattr(user, "pk", None))
            or user.has_perm("runs.cancel_run")
        ),
        "callbacks": snapshot.get("callbacks", []),
        # The chat's thumbs on answers (docs/SCORES.md), unless operators turned them off.
        "feedback": feedback_enabled(),
        "scores_path": reverse("dashboard:session_scores", kwargs={"session_id": session.id}),
        "me": user.get_username(),  # the scores the page hears of live that are the reader's
    }
    if operator:  # a model call sent again, edited (docs/PLAYGROUND.md)
        ids = {"session_id": session.id, "trace_id": "t", "span_id": "s"}
        one = reverse("dashboard:playground", kwargs=ids)
        data["playground_path"] = one.removesuffix("t/s/")  # the page adds <trace>/<span>/
    if data["can_edit_state"]:
        data["state"] = snapshot["state"]
        data["version"] = snapshot["version"]
    return data


SNAPSHOT_RUNS = 200
# The chat's first page: a screen of messages and more (a turn is usually a few events), not
# more, for every event drawn before the first paint costs it (docs/BENCHMARKS.md: 50 → 20
# took ~30 ms off a 10,000-event page's latest messages). Older pages come as the reader
# scrolls up, EVENTS_PAGE_DEFAULT at a time.
SNAPSHOT_EVENTS = 20


def session_snapshot_data(*, session: AgentSession, user: Any) -> dict[str, Any]:
    """What the session page loads first (docs/PROTOCOL.md, "Pages over HTTP"): the seq to
    go live from, the latest runs and events, how many spans there are, what the session's
    model calls used and cost (``usage``, read with the runs' own: they agree), the callback
    switches for operators and the state for those who may edit it. The seq is read first:
    whatever changed after it is in the socket's replay from it, and rows read later are at
    least as new."""
    seq = session_last_seq(session_id=session.id)
    usage, usage_of_runs = session_usage(session_id=session.id)
    runs, runs_more = session_runs_latest(
        session_id=session.id, limit=SNAPSHOT_RUNS, usage=usage_of_runs
    )
    events = session_events_page(session_id=session.id, limit=SNAPSHOT_EVENTS)
    data: dict[str, Any] = {
        "seq": seq,
        "runs": runs,
        "runs_more": runs_more,
        "events": events.events,
        "events_before": events.before,
        "spans_total": span_count(session_id=session.id),
        "usage": usage.as_json(),
    }
    if is_operator(user):
        data["callbacks"] = session_callback_switches(session=session)
        if can_edit_state(user):
            view = session_state_view(session_id=session.id)
            data["state"] = view.state
            data["version"] = view.version
    return data


def span_links_for_user(*, user: Any, session_id: str, span: dict[str, Any]) -> list[Any]:
    """The OTLP links of ``span`` (a span detail), each with the ``session`` of the stored
    span it points at and the ``url`` of that span on its session's page when ``user`` may
    see that session (else without: a link to a span the reader may not see reads like one
    to a span never stored)."""
    otlp = span.get("otlp")
    links = otlp.get("links") if isinstance(otlp, dict) else None
    if not isinstance(links, list) or not links:
        return []
    stored = link_sessions(links=links)
    others = {s for s in stored.values() if s != session_id}
    visible = {session_id} | set(
        session_list_for_user(user=user).filter(pk__in=others).values_list("pk", flat=True)
    )
    found = []
    for link in links:
        if not isinstance(link, dict):
            continue
        trace_id, span_id = str(link.get("traceId")), str(link.get("spanId"))
        where = stored.get((trace_id, span_id))
        if where not in visible:
            found.append(dict(link))
            continue
        page = reverse("dashboard:session", kwargs={"session_id": where})
        query = urlencode({"trace": trace_id, "span": span_id})
        found.append({**link, "session": where, "url": f"{page}?{query}"})
    return found
