"""Cancelling runs: only queued, waiting or running ones, through the service, audited."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from django.contrib.auth.models import User
from django.contrib.messages import get_messages
from django.test import Client
from django.urls import reverse

from agentdash.changes.models import SessionChange
from agentdash.core.models import AuditEntry
from agentdash.runs.models import Run
from agentdash.runs.services import RunNotCancellable, run_cancel_request

pytestmark = pytest.mark.django_db

MakeRun = Callable[..., Run]


@pytest.mark.parametrize(
    ("status", "after"),
    [
        (Run.Status.QUEUED, Run.Status.CANCELLED),  # nobody runs it: cancelled at once
        (Run.Status.WAITING, Run.Status.CANCELLED),  # waiting for an approval: the same
        (Run.Status.RUNNING, Run.Status.RUNNING),  # its worker does the stopping
    ],
)
def test_cancel_request_is_stored_and_audited(
    make_run: MakeRun, superuser: User, status: str, after: str
) -> None:
    run = make_run(status)
    stored = run_cancel_request(run=run, actor=superuser, reason="runaway loop")
    assert stored.cancel_requested and stored.cancel_reason == "runaway loop"
    assert stored.status == after
    assert (stored.error, stored.finished_at is not None) == (
        ("Cancelled: runaway loop", True) if after == Run.Status.CANCELLED else ("", False)
    )
    change = SessionChange.objects.get()  # the run changed: clients hear of it
    assert (change.kind, change.ref) == ("run", str(run.pk))
    entry = AuditEntry.objects.get()
    assert (entry.action, entry.target_type, entry.target_id) == (
        "run.cancel_request",
        "runs.run",
        str(run.pk),
    )
    assert entry.before["cancel_requested"] is False and entry.after["cancel_requested"] is True
    assert entry.actor == superuser and entry.reason == "runaway loop"
    if after == Run.Status.RUNNING:
        run_cancel_request(run=run, actor=superuser, reason="again")  # already asked: no-op
    else:
        with pytest.raises(RunNotCancellable):
            run_cancel_request(run=run, actor=superuser, reason="again")
    assert AuditEntry.objects.count() == 1 and SessionChange.objects.count() == 1
    assert Run.objects.get(pk=run.pk).cancel_reason == "runaway loop"


@pytest.mark.parametrize("status", [Run.Status.SUCCEEDED, Run.Status.FAILED, Run.Status.CANCELLED])
def test_finished_runs_cannot_be_cancelled(make_run: MakeRun, status: str) -> None:
    run = make_run(status)
    with pytest.raises(RunNotCancellable, match=f"is {status}; only queued, waiting or running"):
        run_cancel_request(run=run, actor=None, reason="x")
    assert not Run.objects.get(pk=run.pk).cancel_requested
    assert not AuditEntry.objects.exists()


def test_a_run_that_finished_since_it_was_loaded_is_refused(make_run: MakeRun) -> None:
    run = make_run(Run.Status.RUNNING)
    Run.objects.filter(pk=run.pk).update(status=Run.Status.SUCCEEDED)
    with pytest.raises(RunNotCancellable):
        run_cancel_request(run=run, actor=None)  # ``run`` still says running
    assert not AuditEntry.objects.exists()


def post_cancel(user: User, runs: list[Run], reason: str) -> list[str]:
    client = Client()
    client.force_login(user)
    response = client.post(
        reverse("admin:runs_run_changelist"),
        {"action": "cancel_runs", "_selected_action": [r.pk for r in runs], "reason": reason},
        follow=True,
    )
    assert response.status_code == 200
    return [str(m) for m in get_messages(response.wsgi_request)]


@pytest.mark.parametrize("who", ["superuser", "staff_operator"])
def test_admin_cancel_action(make_run: MakeRun, who: str, request: pytest.FixtureRequest) -> None:
    user = request.getfixturevalue(who)
    running, done = make_run(Run.Status.RUNNING), make_run(Run.Status.SUCCEEDED)
    shown = post_cancel(user, [running, done], "operator says stop")
    assert Run.objects.get(pk=running.pk).cancel_requested
    assert not Run.objects.get(pk=done.pk).cancel_requested
    entry = AuditEntry.objects.get()
    assert (entry.target_id, entry.actor, entry.reason) == (
        str(running.pk),
        user,
        "operator says stop",
    )
    assert "Cancellation requested for 1 run(s)." in shown
    assert (
        f"Run {done.invocation_id} is succeeded; only queued, waiting or running runs can be "
        "cancelled." in shown
    )


def test_admin_cancel_needs_the_cancel_permission(make_run: MakeRun) -> None:
    from django.contrib.auth.models import Permission

    viewer = User.objects.create_user("viewer", password="x", is_staff=True)
    viewer.user_permissions.add(Permission.objects.get(codename="view_run"))
    run = make_run(Run.Status.RUNNING)
    post_cancel(viewer, [run], "")
    assert not Run.objects.get(pk=run.pk).cancel_requested
    assert not AuditEntry.objects.exists()


def test_run_admin_is_read_only(make_run: MakeRun, superuser: User) -> None:
    run = make_run(Run.Status.RUNNING)
    client = Client()
    client.force_login(superuser)
    assert (
        client.get(reverse("admin:runs_run_changelist") + "?status__exact=running").status_code
        == 200
    )
    assert client.get(reverse("admin:runs_run_change", args=[run.pk])).status_code == 200
    assert client.get(reverse("admin:runs_run_add")).status_code == 403
    response = client.post(
        reverse("admin:runs_run_change", args=[run.pk]), {"status": "succeeded", "_save": "Save"}
    )
    assert response.status_code == 403
    assert (
        client.post(reverse("admin:runs_run_delete", args=[run.pk]), {"post": "yes"}).status_code
        == 403
    )
    assert Run.objects.get(pk=run.pk).status == Run.Status.RUNNING
