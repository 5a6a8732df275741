"""Online evaluators at work (docs/SCORES.md, "Online evaluators"): after each run a worker
executed, the enabled rules that take it — its agent, its outcome, the sampled share —
evaluate it, each once, and give their score as an evaluator. Whatever an evaluator does
(raises, times out, answers nonsense), the run is as it ended: the evaluation records the
failure instead."""

from __future__ import annotations

import asyncio
import hashlib
import logging
from collections.abc import Iterable
from typing import Any

from django.db import transaction
from django.utils import timezone

from agentdash.agent_sessions.selectors import event_from_row, session_events
from agentdash.core.prepared import PreparedQuery
from agentdash.core.threads import in_worker_thread
from agentdash.runs.models import Run
from agentdash.scores.evaluator_checks import (
    EvaluatorError,
    Material,
    Target,
    check_verdict,
    config_check,
    material_of,
)
from agentdash.scores.judge import judge_run
from agentdash.scores.models import Evaluation, EvaluatorRule, Score
from agentdash.scores.services import ScoreGiven, score_record

logger = logging.getLogger(__name__)

FINISHED = (Run.Status.SUCCEEDED, Run.Status.FAILED)


def sampled(rule_name: str, invocation_id: str, rate: float) -> bool:
    """Whether the run is in the rule's sample: a hash of both, so the same run is in or out
    for the same rule every time (an evaluation asked again agrees)."""
    if rate >= 1:
        return True
    digest = hashlib.sha256(f"{rule_name}\x00{invocation_id}".encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64 < rate


def rules_taking(run: Run, rules: Iterable[EvaluatorRule]) -> list[EvaluatorRule]:
    """The rules of ``rules`` whose filter and sample take ``run``."""
    if run.status not in FINISHED:
        return []
    return [
        rule for rule in rules
        if rule.agent_name in ("", run.agent_name) and rule.outcome in ("", run.status)
        and sampled(rule.name, run.invocation_id, rule.sample_rate)
    ]  # fmt: skip


_ENABLED: PreparedQuery[EvaluatorRule] = PreparedQuery(
    lambda: EvaluatorRule.objects.filter(enabled=True).select_related("definition")
)


def _enabled_rules() -> list[EvaluatorRule]:
    return _ENABLED.rows()


def run_and_rules(run_id: int) -> tuple[Run | None, list[EvaluatorRule]]:
    """The run and the enabled rules that take it (none: the run is not read at all)."""
    rules = _enabled_rules()
    if not rules:  # as a rule, none
        return None, []
    run = Run.objects.select_related("session").filter(pk=run_id).first()
    return (run, rules_taking(run, rules)) if run is not None else (None, [])


async def run_evaluate(
    run_id: int, looked: tuple[Run | None, list[EvaluatorRule]] | None = None
) -> None:
    """Evaluate run ``run_id`` with every rule that takes it (the ``after_run`` hook;
    ``looked``: :func:`run_and_rules`, read already where the run's end was stored)."""
    run, rules = looked if looked is not None else await in_worker_thread(run_and_rules)(run_id)
    for rule in rules:
        assert run is not None
        await evaluate(run, rule)


def _begin(run: Run, rule: EvaluatorRule) -> Evaluation | None:
    """The evaluation, begun; ``None`` when this rule has evaluated the run already."""
    with transaction.atomic():
        evaluation, made = Evaluation.objects.get_or_create(
            rule=rule, run=run, defaults={"session_id": run.session_id}
        )
    return evaluation if made else None


def _material(run: Run) -> Material:
    rows = session_events(session_id=run.session_id, invocation_id=run.invocation_id)
    return material_of(event_from_row(row) for row in rows)


async def evaluate(run: Run, rule: EvaluatorRule) -> Evaluation | None:
    """One rule on one run, once; the evaluation as it ended (``None``: done before)."""
    evaluation = await in_worker_thread(_begin)(run, rule)
    if evaluation is None:
        return None
    definition = rule.definition
    target = Target(definition.kind, definition.minimum, definition.maximum,
                    list(definition.categories or []))  # fmt: skip
    said: dict[str, Any] = {}
    try:
        config = config_check(rule.evaluator, rule.config, target)
        material = await in_worker_thread(_material)(run)
        if rule.evaluator == EvaluatorRule.Evaluator.LLM_JUDGE:
            said["judge_model"] = config["model"]
            async with asyncio.timeout(config["timeout_s"]):
                judged = await judge_run(rule_name=rule.name, run_id=run.pk, config=config,
                                         material=material, target=target)  # fmt: skip
            value, why = judged.value, judged.explanation
            said.update(judge_session_id=judged.session_id, input_tokens=judged.input_tokens,
                        output_tokens=judged.output_tokens, cost_usd=judged.cost_usd)  # fmt: skip
        else:
            value, why = check_verdict(rule.evaluator, config, material, target)
        score = await in_worker_thread(_score)(run, rule, value, why)
        said.update(status=Evaluation.Status.SCORED, score=score, explanation=why[:2000])
    except asyncio.CancelledError:
        said.update(status=Evaluation.Status.FAILED, error="stopped with its worker")
        await in_worker_thread(_end)(evaluation, said)
        raise
    except TimeoutError:
        waited = rule.config.get("timeout_s", 60)
        said.update(
            status=Evaluation.Status.FAILED, error=f"the judge did not answer in {waited} s"
        )
    except Exception as exc:  # an evaluator's failure is recorded, never raised to the run
        logger.info("evaluator %s on run %s failed: %s", rule.name, run.pk, exc)
        said.update(status=Evaluation.Status.FAILED, error=_error_text(exc))
    return await in_worker_thread(_end)(evaluation, said)


def _score(run: Run, rule: EvaluatorRule, value: Any, why: str) -> Score:
    given = ScoreGiven(name=rule.definition.name, value=value, target="run", run_id=run.pk,
                       comment=why[:2000])  # fmt: skip
    score, _ = score_record(session=run.session, given=given, source="evaluator", actor=None,
                            author=f"evaluator:{rule.name}")  # fmt: skip
    return score


def _end(evaluation: Evaluation, said: dict[str, Any]) -> Evaluation:
    for name, value in said.items():
        setattr(evaluation, name, value)
    evaluation.ended_at = timezone.now()
    evaluation.save()
    return evaluation


def _error_text(exc: BaseException) -> str:
    if isinstance(exc, EvaluatorError):
        return str(exc)[:2000]
    messages = getattr(exc, "message_dict", None)
    if isinstance(messages, dict):  # a ValidationError: the value the score could not take
        return "; ".join(f"{k}: {' '.join(v)}" for k, v in messages.items())[:2000]
    return f"{type(exc).__name__}: {exc}"[:2000]
