"""Reads of remote processes: the one a token names, the callbacks an external session's app
registered, and the switches a process must obey."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from django.db.models import Min, Q, QuerySet
from django.utils import timezone

from agentdash.controls.models import Breakpoint, CallbackSetting
from agentdash.ingest.models import IngestKey
from agentdash.ingest.services import session_id_for
from agentdash.remote.models import RemotePause, RemoteProcess

CONNECTED_S = 30.0
"""A process heard from this recently counts as connected (it asks every second or so)."""


def remote_process_find(*, key: IngestKey, token: str) -> RemoteProcess | None:
    """The process ``token`` names, if ``key`` registered it."""
    process = RemoteProcess.objects.filter(key=key, token=token).first()
    if process is not None:
        process.key = key  # read already: not again for each use
    return process


def remote_processes_of(*, owner_id: int | None, project: str) -> list[RemoteProcess]:
    """The processes of an app (its keys' owner and project), the latest heard first."""
    return list(
        RemoteProcess.objects.filter(key__owner_id=owner_id, key__project=project)
        .select_related("key")
        .order_by("-last_seen")[:50]
    )


def is_connected(process: RemoteProcess) -> bool:
    return timezone.now() - process.last_seen <= timedelta(seconds=CONNECTED_S)


def remote_callbacks(*, owner_id: int | None, project: str) -> list[dict[str, Any]]:
    """The callbacks the app's latest process registered, as the session page lists a local
    agent's (``{agent, slot, name, style}``); ``[]`` when no process ever connected."""
    processes = remote_processes_of(owner_id=owner_id, project=project)
    if not processes:
        return []
    return [
        {"agent": agent["name"], "slot": callback["slot"], "name": callback["name"],
         "style": "any-agent" if callback["slot"] == "callbacks" else "adk"}
        for agent in processes[0].agents
        for callback in agent.get("callbacks", [])
    ]  # fmt: skip


def remote_switches(*, process: RemoteProcess, sessions: list[str]) -> list[dict[str, Any]]:
    """The callback switches ``process`` must obey: the global ones of its agents' callbacks,
    and those of the sessions it names (its own ids for them, as it sends spans): ``[{agent,
    callback, session (its id, or None), enabled}]``."""
    agents = [agent["name"] for agent in process.agents]
    ours = {session_id_for(process.key, session): session for session in sessions[:100]}
    rows = CallbackSetting.objects.filter(agent_name__in=agents).filter(
        Q(session_id__isnull=True) | Q(session_id__in=list(ours))
    )
    return [
        {
            "agent": row.agent_name,
            "callback": row.callback_name,
            "session": ours.get(row.session_id) if row.session_id else None,
            "enabled": row.enabled,
        }
        for row in rows
    ]


def remote_breakpoints(*, process: RemoteProcess, sessions: list[str]) -> list[dict[str, Any]]:
    """The breakpoints ``process`` must pause at: those set for its app (the key's project,
    as the session page sets them) or one of its agents, in every session or in one it
    names: ``[{agent (None: any of its agents), session (its id, or None), kind, tool,
    outcome}]``."""
    agents = {agent["name"] for agent in process.agents}
    project = process.key.project
    ours = {session_id_for(process.key, session): session for session in sessions[:100]}
    rows = Breakpoint.objects.filter(agent_name__in=agents | {project}, enabled=True).filter(
        Q(session_id__isnull=True) | Q(session_id__in=list(ours))
    )
    return [
        {
            "agent": None if row.agent_name == project else row.agent_name,
            "session": ours.get(row.session_id) if row.session_id else None,
            "kind": row.kind,
            "tool": row.tool_name,
            "outcome": row.outcome,
        }
        for row in rows
    ]


def remote_tools(*, owner_id: int | None, project: str) -> list[str]:
    """The tools the app's latest process registered (the breakpoints form's choices)."""
    processes = remote_processes_of(owner_id=owner_id, project=project)
    if not processes:
        return []
    return sorted({tool for agent in processes[0].agents for tool in agent.get("tools", [])})


def remote_counts() -> tuple[int, int]:
    """(processes heard from within :data:`CONNECTED_S`, pauses waiting for an answer)."""
    since = timezone.now() - timedelta(seconds=CONNECTED_S)
    connected = RemoteProcess.objects.filter(last_seen__gte=since).count()
    return connected, RemotePause.objects.filter(status=RemotePause.Status.WAITING).count()


def oldest_pause_asked(*, sessions: QuerySet[Any] | None = None) -> datetime | None:
    """When the remote pause that has waited longest for an answer (of the sessions of
    ``sessions`` when given) was asked, or ``None`` when none waits."""
    rows = RemotePause.objects.filter(status=RemotePause.Status.WAITING)
    if sessions is not None:
        rows = rows.filter(session_id__in=sessions.values("pk"))
    found: datetime | None = rows.aggregate(since=Min("asked_at"))["since"]
    return found


def pauses_between(
    *, start: datetime, end: datetime, sessions: QuerySet[Any] | None = None, tool: str = ""
) -> list[tuple[datetime, datetime | None, str, str]]:
    """The pauses asked in ``[start, end)`` (of the sessions of ``sessions``, of ``tool``,
    when given), as the Monitor counts waits: when asked, when answered (``None``: not),
    the outcome — the answer's decision, ``""`` while it waits, ``ended`` when the app ended
    it —, the kind."""
    rows = RemotePause.objects.filter(asked_at__gte=start, asked_at__lt=end)
    if sessions is not None:
        rows = rows.filter(session_id__in=sessions.values("pk"))
    if tool:
        rows = rows.filter(tool=tool)
    found = []
    for asked, answered, status, answer, kind in rows.values_list(
        "asked_at", "answered_at", "status", "answer", "kind"
    ).order_by():
        if status == RemotePause.Status.WAITING:
            outcome = ""
        elif status == RemotePause.Status.ENDED or not isinstance(answer, dict):
            outcome, answered = "ended", None
        else:
            outcome = str(answer.get("decision") or "ended")[:16]
        found.append((asked, answered, outcome, kind))
    return found


def sessions_with_pauses(*, start: datetime, end: datetime, outcome: str) -> QuerySet[Any, Any]:
    """The ids (``session_id``) of the sessions with a pause asked in ``[start, end)`` that
    ended as ``outcome`` (as :func:`pauses_between` names outcomes; ``waiting``: not
    answered yet; ``""``: any)."""
    rows = RemotePause.objects.filter(asked_at__gte=start, asked_at__lt=end)
    waiting, ended = RemotePause.Status.WAITING, RemotePause.Status.ENDED
    if outcome == "waiting":
        rows = rows.filter(status=waiting)
    elif outcome == "ended":
        rows = rows.exclude(status=waiting).filter(Q(status=ended) | Q(answer__isnull=True))
    elif outcome:
        rows = rows.exclude(status__in=(waiting, ended)).filter(answer__decision=outcome)
    return rows.values("session_id")
