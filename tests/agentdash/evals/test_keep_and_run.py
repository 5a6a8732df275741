"""Keep a session as a test, then run it: through real runs of the offline model on the
run pipeline. The case passes against the agent it was kept from and fails once the agent
is changed; ``manage.py eval`` says so per case, with its exit code."""

from __future__ import annotations

import io
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from asgiref.sync import sync_to_async
from django.contrib.auth.models import User
from django.core.management import call_command

from agentdash.agent_sessions.models import AgentSession
from agentdash.evals.models import EvalCaseResult, EvalRun, EvalSetRecord
from agentdash.evals.runner import eval_run_execute
from agentdash.evals.services import eval_case_save, eval_run_create, eval_set_text
from agentdash.registry.loader import agents_cache_clear
from agentdash.runs.models import Run
from agentdash.runs.services import run_enqueue, session_start
from runtime.evaluation import eval_set_loads
from tests.agentdash.evals.conftest import weather_agent
from tests.agentdash.runs import agents as agents_module
from tests.agentdash.runs.conftest import run_ended, says

pytestmark = pytest.mark.django_db(transaction=True)

QUESTIONS = ("What is the weather in Paris?", "hello there")


async def _chat(user: User) -> AgentSession:
    """A session of the weather agent: two turns, each run to its end."""
    run = await sync_to_async(session_start)(
        agent_name="eval_weather", text=QUESTIONS[0], requested_by=user
    )
    await run_ended(run.pk)
    session = await AgentSession.objects.aget(pk=run.session_id)
    second = await sync_to_async(run_enqueue)(
        session=session, agent_name="eval_weather", message=says(QUESTIONS[1]), requested_by=user
    )
    await run_ended(second.pk)
    return session


def _plant_change(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(agents_module, "eval_weather", weather_agent(changed=True))
    agents_cache_clear()


def _run(record: EvalSetRecord, user: User) -> EvalRun:
    eval_run = eval_run_create(record=record, actor=user)
    return eval_run_execute(eval_run_id=eval_run.pk, turn_timeout=60)


def _command(*args: str) -> tuple[int, str]:
    out = io.StringIO()
    try:
        call_command("eval", *args, stdout=out, stderr=io.StringIO())
    except SystemExit as exc:
        return int(exc.code or 0), out.getvalue()
    return 0, out.getvalue()


async def test_a_kept_session_passes_against_its_agent_and_fails_after_a_change(
    register: Callable[..., None], host: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    register(weather_agent())
    user = await User.objects.acreate_user("erin")
    session = await _chat(user)

    record, replaced = await sync_to_async(eval_case_save)(
        session=session, eval_set_id="weather", eval_id="paris", actor=user
    )
    assert not replaced and (record.agent_name, record.case_count) == ("eval_weather", 1)
    (case,) = eval_set_loads(eval_set_text(record)).eval_cases
    assert case.conversation is not None
    first, second = case.conversation
    assert [(c.name, c.args) for c in first.tool_calls()] == [("get_weather", {"city": "Paris"})]
    assert second.tool_calls() == []
    assert (
        first.final_response is not None and "sunny" in (first.final_response.parts or [])[0].text
    )  # type: ignore[operator]

    passed = await sync_to_async(_run)(record, user)
    assert passed.status == EvalRun.Status.PASSED
    result = await EvalCaseResult.objects.aget(eval_run=passed)
    assert (result.status, result.tool_trajectory_score, result.response_match_score) == (
        EvalCaseResult.Status.PASSED,
        1.0,
        1.0,
    )
    assert result.exact_match and result.session_id not in (None, session.id)
    rerun = await AgentSession.objects.aget(pk=result.session_id)
    assert (rerun.app_name, rerun.owner_id) == ("eval_weather", user.pk)

    _plant_change(monkeypatch)
    failed = await sync_to_async(_run)(record, user)
    assert failed.status == EvalRun.Status.FAILED
    result = await EvalCaseResult.objects.aget(eval_run=failed)
    assert result.status == EvalCaseResult.Status.FAILED
    assert result.tool_trajectory_score == 0.5  # the second turn calls no tool either way
    turn = result.details[0]
    assert turn["expected_tools"] == [{"name": "get_weather", "args": {"city": "Paris"}}]
    assert turn["actual_tools"] == [{"name": "get_forecast", "args": {"city": "Paris"}}]
    assert "rainy" in turn["actual_response"] and not turn["exact_match"]


@pytest.mark.slow  # a process (or twenty) of its own: seconds
async def test_manage_py_eval_prints_each_case_and_exits_1_on_a_failure(
    register: Callable[..., None],
    host: Any,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    settings: Any,
) -> None:
    settings.VAR_DIR = tmp_path  # where make run records its address: here, port 8123
    (tmp_path / "served_url").write_text("http://127.0.0.1:8123\n")
    register(weather_agent())
    user = await User.objects.acreate_user("erin")
    session = await _chat(user)
    record, _ = await sync_to_async(eval_case_save)(
        session=session, eval_set_id="weather", eval_id="paris", actor=user
    )

    code, out = await sync_to_async(_command)("weather")
    assert code == 0, out
    lines = out.splitlines()
    assert lines[0].startswith("eval set weather (1 cases) against eval_weather: ")
    assert "tool_trajectory_avg_score ≥ 1" in lines[0]
    assert lines[1].startswith("PASS  paris  tool trajectory 1.00  response match 1.00  exact yes")
    kept = await EvalCaseResult.objects.filter(eval_run__eval_set=record).alatest("pk")
    assert lines[1].endswith(f"http://127.0.0.1:8123/sessions/{kept.session_id}/")
    assert lines[-1] == "1 cases: 1 passed, 0 did not"

    # The downloaded file runs too (stored as it is, so the set is the same one).
    path = tmp_path / "weather.evalset.json"
    path.write_text(eval_set_text(record))
    code, out = await sync_to_async(_command)(str(path), "--user", "erin")
    assert code == 0 and "PASS  paris" in out
    assert await EvalSetRecord.objects.acount() == 1

    _plant_change(monkeypatch)
    code, out = await sync_to_async(_command)("weather", "--base-url", "https://dash.example/")
    assert code == 1, out
    assert "FAIL  paris  tool trajectory 0.50" in out
    assert 'turn 1: tools expected [get_weather({"city": "Paris"})], got [get_forecast(' in out
    assert "https://dash.example/sessions/" in out
    assert out.splitlines()[-1] == "1 cases: 0 passed, 1 did not"

    # A lower bar passes the changed agent's answers but not its tools.
    code, out = await sync_to_async(_command)("weather", "--tool-trajectory-threshold", "0.5")
    assert code == 0 and "PASS  paris" in out


def test_the_command_refuses_what_it_cannot_run(tmp_path: Path) -> None:
    from django.core.management.base import CommandError

    with pytest.raises(CommandError, match="neither a file nor a stored eval set"):
        call_command("eval", "nope")
    bad = tmp_path / "bad.evalset.json"
    bad.write_text('{"eval_set_id": "x", "eval_cases": [{"eval_id": "c"}]}')
    with pytest.raises(CommandError, match="exactly one of"):
        call_command("eval", str(bad))
    good = Path(__file__).parents[2] / "runtime/evaluation/data/home_automation.evalset.json"
    with pytest.raises(CommandError, match="--user"):
        call_command("eval", str(good))
    User.objects.create_user("erin")
    with pytest.raises(CommandError, match="no configured agent is named 'home_automation_agent'"):
        call_command("eval", str(good), "--user", "erin", stderr=io.StringIO())
    with pytest.raises(CommandError, match="from 0 to 1"):
        call_command(
            "eval", "home_automation_agent_light_on_off_set", "--user", "erin",
            "--response-match-threshold", "2",
        )  # fmt: skip
    # The file was stored before the agent was looked up: it is there to run with --agent.
    assert EvalSetRecord.objects.get().eval_set_id == "home_automation_agent_light_on_off_set"


async def test_an_eval_run_whose_process_stopped_is_taken_up_by_a_reaper(
    register: Callable[..., None], host: Any
) -> None:
    """An eval run executes in a thread of the process that started it; that process gone,
    its heartbeat stops and a reaping pass queues it again and executes it here: the case
    that was under way runs again from the start. Out of attempts, it ends ``error``."""
    from datetime import timedelta

    from django.utils import timezone

    from agentdash.evals.runner import eval_runs_reap
    from agentdash.runs.reaper import REAP_HOOKS, runs_reap

    register(weather_agent())
    user = await User.objects.acreate_user("erin")
    session = await _chat(user)
    record, _ = await sync_to_async(eval_case_save)(
        session=session, eval_set_id="weather", eval_id="paris", actor=user
    )
    eval_run = await sync_to_async(eval_run_create)(record=record, actor=user)
    # As its process left it: claimed, a case under way, no heartbeat for a minute.
    long_ago = timezone.now() - timedelta(seconds=60)
    await EvalRun.objects.filter(pk=eval_run.pk).aupdate(
        status=EvalRun.Status.RUNNING, heartbeat_at=long_ago
    )
    await EvalCaseResult.objects.filter(eval_run=eval_run).aupdate(
        status=EvalCaseResult.Status.RUNNING
    )
    assert eval_runs_reap in REAP_HOOKS  # registered by the evals app
    spawned: list[int] = []
    await sync_to_async(eval_runs_reap)(stale_after_s=10, max_attempts=3, spawn=spawned.append)
    queued = await EvalRun.objects.aget(pk=eval_run.pk)
    assert (queued.status, queued.attempt, spawned) == (EvalRun.Status.QUEUED, 2, [eval_run.pk])
    assert "its process stopped" in queued.error
    assert (
        await EvalCaseResult.objects.filter(
            eval_run=eval_run, status=EvalCaseResult.Status.PENDING
        ).acount()
        == 1
    )
    done = await sync_to_async(eval_run_execute)(eval_run_id=eval_run.pk, turn_timeout=60)
    assert done.status == EvalRun.Status.PASSED

    # Out of attempts: an error that says why, nothing executed.
    await EvalRun.objects.filter(pk=eval_run.pk).aupdate(
        status=EvalRun.Status.RUNNING, heartbeat_at=long_ago, attempt=3
    )
    spawned.clear()
    report = await sync_to_async(runs_reap)(stale_after_s=10, max_attempts=3)  # the hook too
    assert report is not None
    gone = await EvalRun.objects.aget(pk=eval_run.pk)
    assert gone.status == EvalRun.Status.ERROR and "after 3 attempts" in gone.error
    assert spawned == []


def refund(invoice: str) -> dict[str, Any]:
    """Refund an invoice."""
    return {"refunded": invoice}


async def test_a_turn_paused_for_an_approval_does_not_hold_up_the_next(
    register: Callable[..., None], host: Any
) -> None:
    """A session's runs take turns: an eval turn that ends waiting for an approval nobody
    gives in an eval would hold the next turn until it timed out; it is cancelled, saying
    why, and the conversation goes on."""
    from google.genai import types

    from agentdash.evals.services import eval_set_import
    from runtime import FunctionTool, LlmAgent, ScriptedLlm
    from runtime.evaluation import EvalSet

    call = types.FunctionCall(name="refund", args={"invoice": "INV-1"})
    register(
        LlmAgent(
            name="eval_refunds",
            model=ScriptedLlm(responses=[call, "Anything else?"]),
            tools=[FunctionTool(refund, require_confirmation=True)],
        )
    )
    user = await User.objects.acreate_user("fay")
    turns = [
        {"invocation_id": f"e-{n}", "user_content": {"role": "user", "parts": [{"text": text}]}}
        for n, text in enumerate(("Refund INV-1", "thanks"))
    ]
    eval_set = EvalSet.model_validate(
        {"eval_set_id": "refunds", "eval_cases": [{"eval_id": "two", "conversation": turns}]}
    )
    record, _ = await sync_to_async(eval_set_import)(
        eval_set=eval_set, actor=user, agent_name="eval_refunds"
    )
    done = await sync_to_async(_run)(record, user)
    result = await EvalCaseResult.objects.aget(eval_run=done)
    assert result.status != EvalCaseResult.Status.ERROR, result.error
    runs = [r async for r in Run.objects.filter(session_id=result.session_id).order_by("pk")]
    assert [r.status for r in runs] == [Run.Status.CANCELLED, Run.Status.SUCCEEDED]
    assert "next turn goes on" in runs[0].error
