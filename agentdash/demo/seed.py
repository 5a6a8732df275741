"""Demo accounts and data for development: ``manage.py seed_demo``."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.db import transaction

from agentdash.controls.models import Policy
from agentdash.controls.services import policy_create
from agentdash.core.conf import agentdash_setting
from agentdash.core.permissions import OPERATORS_GROUP
from agentdash.core.services import roles_ensure
from agentdash.demo.policies import DEFAULT_QUERY_POLICY, QUERY_KIND
from agentdash.registry.services import agents_mirror
from agentdash.scores.models import EvaluatorRule, ScoreDefinition
from agentdash.scores.rules import evaluator_rule_save
from agentdash.scores.services import definition_save

DEFAULT_DEMO_PASSWORD = "agentdash-demo"
"""The demo accounts' password when ``AGENTDASH_DEMO_PASSWORD`` is not set (documented)."""

DEMO_USERS = ("alice", "bob")
DEMO_OPERATOR = "operator"
DEMO_ADMIN = "admin"
DATA_AGENT_POLICY = "data_agent query policy"
SUPPORT_AGENTS = ["support_desk", "billing_agent", "tech_agent"]
GUARDED_AGENTS = [*SUPPORT_AGENTS, "data_agent", "analyst"]
GUARDRAIL_POLICIES: list[dict[str, Any]] = [
    {
        "name": "demo step limits",
        "kind": "step_limits",
        "config": {"max_model_calls": 12, "max_tool_calls": 8},
        "agents": GUARDED_AGENTS,
    },
    {
        "name": "demo input screen",
        "kind": "input_screen",
        "config": {
            "blocked_terms": ["lawsuit", "lawyer"],
            "blocked_patterns": [r"ignore (all |any |your )?(previous |prior )?instructions"],
            "reply": "I can't help with legal matters or with changing my instructions. "
            "For legal questions, please write to our legal team.",
        },
        "agents": GUARDED_AGENTS,
    },
    {
        "name": "demo tool rate limit",
        "kind": "rate_limit",
        "config": {"max_calls": 20, "window_seconds": 60},
        "agents": GUARDED_AGENTS,
    },
    {
        "name": "demo tool guard",
        "kind": "tool_guard",
        "config": {
            "allowed_tools": [
                "lookup_invoice",
                "billing_policy",
                "reimburse_invoice",
                "check_service_status",
                "search_known_issues",
                "run_query",
                "run_python",
                "transfer_to_agent",
            ],
            "tools": {
                "lookup_invoice": {"max_length": {"invoice_number": 40}},
                "reimburse_invoice": {"max_length": {"invoice_number": 40}},
                "run_query": {"max_length": {"sql": 2000}},
                "run_python": {"max_length": {"code": 20000}},
            },
        },
        "agents": GUARDED_AGENTS,
    },
    {
        "name": "demo output redaction",
        "kind": "output_redaction",
        "config": {"redact": ["email", "phone", "card", "key"]},
        "agents": GUARDED_AGENTS,
    },
]
"""The demo agents' guardrail policies, created by ``seed_demo`` when missing."""


class DemoSeedRefusedError(RuntimeError):
    """Seeding demo accounts outside development (``DEBUG`` off) is refused."""


@dataclass
class DemoSeedResult:
    """What :func:`demo_seed` did. ``password_is_default``: the documented default was used."""

    created: list[str] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)
    password_is_default: bool = True
    policy_created: bool = False
    guardrail_policies_created: list[str] = field(default_factory=list)
    judge_rule_created: bool = False
    agents: list[str] = field(default_factory=list)


def demo_password() -> tuple[str, bool]:
    """``(password, is_default)``: ``AGENTDASH["DEMO_PASSWORD"]`` or the documented default."""
    configured = agentdash_setting("DEMO_PASSWORD")
    return (configured, False) if configured else (DEFAULT_DEMO_PASSWORD, True)


def demo_login_hint() -> dict[str, Any] | None:
    """What a login page may tell a developer (only with ``DEBUG`` on, else ``None``): the
    demo user names and the password when it is the public default, never a configured one."""
    if not settings.DEBUG:
        return None
    password, is_default = demo_password()
    return {
        "users": [*DEMO_USERS, DEMO_OPERATOR, DEMO_ADMIN],
        "password": password if is_default else "",
    }


def _user_upsert(
    *, username: str, password: str, result: DemoSeedResult, staff: bool = False,
    superuser: bool = False,
) -> Any:  # fmt: skip
    user_model = get_user_model()
    user, created = user_model.objects.get_or_create(
        username=username, defaults={"email": f"{username}@example.com"}
    )
    user.is_active = True
    user.is_staff = staff or superuser
    user.is_superuser = superuser
    user.set_password(password)
    user.save()
    (result.created if created else result.updated).append(username)
    return user


def _query_policy_ensure() -> bool:
    """Create the data agent's default ``query`` policy unless it exists (validated and
    audited by the controls service); an existing policy, maybe edited by an operator, is
    left alone."""
    if Policy.objects.filter(name=DATA_AGENT_POLICY).exists():
        return False
    fields: dict[str, Any] = {
        "name": DATA_AGENT_POLICY,
        "kind": QUERY_KIND,
        "config": dict(DEFAULT_QUERY_POLICY),
        "agents": ["data_agent"],
    }
    policy_create(**fields, actor=None, reason="manage.py seed_demo")
    return True


def _guardrail_policies_ensure() -> list[str]:
    """Create each of :data:`GUARDRAIL_POLICIES` that does not exist (by name); an existing
    one, maybe edited by an operator, is left alone. Returns the names created."""
    created = []
    for fields in GUARDRAIL_POLICIES:
        if Policy.objects.filter(name=fields["name"]).exists():
            continue
        policy_create(**fields, actor=None, reason="manage.py seed_demo")
        created.append(fields["name"])
    return created


JUDGE_RULE = "support-desk-judge"


def _judge_rule_ensure(operator: Any) -> bool:
    """An online LLM judge (the offline model) on half the support desk's finished runs,
    scoring ``helpful`` (docs/SCORES.md), unless a rule of that name exists."""
    if EvaluatorRule.objects.filter(name=JUDGE_RULE).exists():
        return False
    helpful = ScoreDefinition.objects.filter(name="helpful").first()
    if helpful is None:
        helpful = definition_save(
            definition=ScoreDefinition(name="helpful", kind="boolean",
                                       description="The answer helped the customer."),
            actor=operator,
        )  # fmt: skip
    rule = EvaluatorRule(name=JUDGE_RULE, evaluator=EvaluatorRule.Evaluator.LLM_JUDGE,
                         agent_name="support_desk", sample_rate=0.5,
                         config={"model": "offline"}, definition=helpful)  # fmt: skip
    evaluator_rule_save(rule=rule, actor=operator)
    return True


def demo_seed() -> DemoSeedResult:
    """Create or update the demo accounts — ``alice`` and ``bob`` (users), ``operator`` (in
    the Operators group, and staff: it uses the admin within the group's permissions) and
    ``admin`` (superuser) — all with :func:`demo_password`; create the data agent's default
    query policy and the demo agents' guardrail policies if missing; mirror the configured
    agents.
    Idempotent: a second run resets the same accounts to the same state.

    Raises :class:`DemoSeedRefusedError` when ``settings.DEBUG`` is off, and
    ``ImproperlyConfigured`` when a configured agent does not load.
    """
    if not settings.DEBUG:
        raise DemoSeedRefusedError(
            "seed_demo creates accounts with a known password; it only runs with DEBUG on "
            "(development). Refusing because DEBUG is off."
        )
    password, is_default = demo_password()
    result = DemoSeedResult(password_is_default=is_default)
    with transaction.atomic():
        roles_ensure()
        operators = Group.objects.get(name=OPERATORS_GROUP)
        for username in DEMO_USERS:
            user = _user_upsert(username=username, password=password, result=result)
            user.groups.remove(operators)
        # Staff, so the admin lets the operator in; the group's permissions decide what it
        # shows (policies, switches, sessions and their state, runs; never users or groups).
        operator = _user_upsert(
            username=DEMO_OPERATOR, password=password, staff=True, result=result
        )
        operator.groups.add(operators)
        _user_upsert(username=DEMO_ADMIN, password=password, superuser=True, result=result)
        result.policy_created = _query_policy_ensure()
        result.guardrail_policies_created = _guardrail_policies_ensure()
        result.judge_rule_created = _judge_rule_ensure(operator)
        result.agents = [record.name for record in agents_mirror()]
    return result
