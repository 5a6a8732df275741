"""``manage.py eval <file-or-eval-set-id> [--agent NAME] [--user NAME]``: run an eval set
(ADK's ``*.evalset.json``, its older ``*.test.json``, or one stored here) against an agent
configured now, one new session per case through the run pipeline, and print per case the
tool trajectory match, the response match score, pass or fail and the session's timeline.
Exits 1 when a case did not pass (docs/EVAL.md)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError, CommandParser

from agentdash.core.site_url import site_base_url
from agentdash.evals.models import EvalCaseResult, EvalRun, EvalSetRecord
from agentdash.evals.runner import TURN_TIMEOUT_S, eval_run_execute
from agentdash.evals.selectors import eval_run_cases
from agentdash.evals.services import (
    criteria_clean,
    eval_run_create,
    eval_set_import,
    eval_set_parse,
)
from agentdash.runs.host import run_host
from runtime.evaluation import (
    DEFAULT_CRITERIA,
    RESPONSE_MATCH_SCORE,
    TOOL_TRAJECTORY_AVG_SCORE,
    eval_set_data,
)


class Command(BaseCommand):
    help = (
        "Run an eval set (a .evalset.json / .test.json file, or the id of a stored set) "
        "against an agent configured now; exit 1 if a case fails."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("target", help="an eval-set file, or a stored eval set's id")
        parser.add_argument("--agent", default="", help="the agent to run the cases against")
        parser.add_argument(
            "--user",
            default="",
            help="who owns the cases' sessions (default: who stored the set)",
        )
        parser.add_argument(
            "--tool-trajectory-threshold",
            type=float,
            metavar="T",
            help=f"default {DEFAULT_CRITERIA[TOOL_TRAJECTORY_AVG_SCORE]} (or test_config.json's)",
        )
        parser.add_argument(
            "--response-match-threshold",
            type=float,
            metavar="T",
            help=f"default {DEFAULT_CRITERIA[RESPONSE_MATCH_SCORE]} (or test_config.json's)",
        )
        parser.add_argument(
            "--replace",
            action="store_true",
            help="store the file over a stored eval set of the same id that differs",
        )
        parser.add_argument(
            "--timeout",
            type=float,
            default=TURN_TIMEOUT_S,
            help="seconds a turn's run may take (default %(default)g)",
        )
        parser.add_argument(
            "--base-url",
            default="",
            help="where the dashboard is, for the sessions' links (default: "
            "AGENTDASH_BASE_URL if set, else the address make run serves on, else "
            "http://127.0.0.1:8000)",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        target: str = options["target"]
        path = Path(target)
        if path.is_file():
            record, criteria = self._from_file(path, options)
        else:
            stored = EvalSetRecord.objects.filter(eval_set_id=target).first()
            if stored is None:
                raise CommandError(f"{target!r} is neither a file nor a stored eval set's id")
            record, criteria = stored, dict(DEFAULT_CRITERIA)
        criteria = self._thresholds(criteria, options)
        user = self._user(options["user"], record)
        try:
            eval_run = eval_run_create(
                record=record, actor=user, agent_name=options["agent"], criteria=criteria
            )
        except ValidationError as exc:
            raise CommandError(_said(exc)) from None
        self.stdout.write(
            f"eval set {record.eval_set_id} ({record.case_count} cases) against "
            f"{eval_run.agent_name}: "
            + ", ".join(f"{k} ≥ {v:g}" for k, v in eval_run.criteria.items())
        )
        try:
            eval_run = eval_run_execute(eval_run_id=eval_run.pk, turn_timeout=options["timeout"])
        finally:
            run_host().stop_thread()  # the executor's loop, if this command started one
        self._report(eval_run, options["base_url"].rstrip("/") or site_base_url())

    def _from_file(
        self, path: Path, options: dict[str, Any]
    ) -> tuple[EvalSetRecord, dict[str, float]]:
        stem = path.name.removesuffix(".json").removesuffix(".evalset").removesuffix(".test")
        try:
            found = eval_set_parse(path.read_bytes(), eval_set_id=stem)
        except ValidationError as exc:
            raise CommandError(f"{path}: {_said(exc)}") from None
        criteria = dict(DEFAULT_CRITERIA)
        config = path.parent / "test_config.json"  # as adk: criteria beside the file
        if config.is_file():
            try:
                criteria = criteria_clean(json.loads(config.read_text(encoding="utf-8")))
            except (ValueError, ValidationError) as exc:
                raise CommandError(f"{config}: {_said(exc)}") from None
        stored = EvalSetRecord.objects.filter(eval_set_id=found.eval_set_id).first()
        if stored is not None and stored.data == eval_set_data(found):
            return stored, criteria
        if stored is not None and not options["replace"]:
            raise CommandError(
                f"a different eval set {found.eval_set_id!r} is stored already: --replace "
                "stores the file over it"
            )
        user = self._user(options["user"], stored)
        record, _ = eval_set_import(
            eval_set=found, actor=user, agent_name=options["agent"], replace=True
        )
        self.stderr.write(f"stored {path} as eval set {record.eval_set_id}")
        return record, criteria

    @staticmethod
    def _thresholds(criteria: dict[str, float], options: dict[str, Any]) -> dict[str, float]:
        flags = {
            TOOL_TRAJECTORY_AVG_SCORE: options["tool_trajectory_threshold"],
            RESPONSE_MATCH_SCORE: options["response_match_threshold"],
        }
        wanted = {**criteria, **{k: v for k, v in flags.items() if v is not None}}
        try:
            return criteria_clean(wanted)
        except ValidationError as exc:
            raise CommandError(_said(exc)) from None

    @staticmethod
    def _user(name: str, record: EvalSetRecord | None) -> Any:
        users = get_user_model().objects
        if name:
            found = users.filter(**{users.model.USERNAME_FIELD: name}).first()
            if found is None:
                raise CommandError(f"there is no user {name!r}")
            return found
        if record is not None and record.created_by is not None:
            return record.created_by
        raise CommandError("name the user who will own the cases' sessions: --user NAME")

    def _report(self, eval_run: EvalRun, base_url: str) -> None:
        cases = list(eval_run_cases(eval_run=eval_run))
        for case in cases:
            verdict = {"passed": "PASS", "failed": "FAIL"}.get(case.status, "ERROR")
            link = f"{base_url}/sessions/{case.session_id}/" if case.session_id else "(no session)"
            if case.status == EvalCaseResult.Status.ERROR:
                self.stdout.write(f"{verdict:5} {case.eval_id}  {case.error}  {link}")
                continue
            self.stdout.write(
                f"{verdict:5} {case.eval_id}  tool trajectory "
                f"{_score(case.tool_trajectory_score)}  response match "
                f"{_score(case.response_match_score)}  exact "
                f"{'yes' if case.exact_match else 'no'}  {link}"
            )
            if case.status == EvalCaseResult.Status.FAILED:
                for n, turn in enumerate(case.details, 1):
                    self._turn_report(n, turn)
        passed = sum(c.status == EvalCaseResult.Status.PASSED for c in cases)
        summary = f"{len(cases)} cases: {passed} passed, {len(cases) - passed} did not"
        if eval_run.error:
            summary += f"; the run stopped: {eval_run.error}"
        self.stdout.write(summary)
        if eval_run.status != EvalRun.Status.PASSED:
            raise SystemExit(1)

    def _turn_report(self, n: int, turn: dict[str, Any]) -> None:
        scores = turn.get("scores", {})
        if scores.get(TOOL_TRAJECTORY_AVG_SCORE, 1.0) < 1.0:
            self.stdout.write(
                f"    turn {n}: tools expected {_calls(turn['expected_tools'])}, "
                f"got {_calls(turn['actual_tools'])}"
            )
        if RESPONSE_MATCH_SCORE in scores and not turn.get("exact_match"):
            self.stdout.write(
                f"    turn {n}: response expected {_short(turn['expected_response'])}, "
                f"got {_short(turn['actual_response'])}"
            )


def _score(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}"


def _calls(calls: list[dict[str, Any]] | None) -> str:
    if calls is None:
        return "(no turn)"
    return "[" + ", ".join(f"{c['name']}({json.dumps(c['args'])[:80]})" for c in calls) + "]"


def _short(text: str | None) -> str:
    return "(no turn)" if text is None else json.dumps(text[:120], ensure_ascii=False)


def _said(exc: Exception) -> str:
    messages = getattr(exc, "message_dict", None)
    if messages:
        return "; ".join(" ".join(v) for v in messages.values())
    return str(exc)
