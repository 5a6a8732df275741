"""The database mirror of the configured agents."""

from __future__ import annotations

from io import StringIO

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.core.management.sql import emit_post_migrate_signal

from agentdash.registry.models import AgentRecord
from agentdash.registry.services import agents_mirror

pytestmark = pytest.mark.django_db

SAMPLES = "tests.agentdash.registry.sample_agents"

CAPITAL_CALLBACKS = [
    {"agent": "capital_agent", "slot": "before_model", "name": "block_keyword_guardrail"},
    {"agent": "capital_agent", "slot": "after_model", "name": "add_disclaimer"},
    {"agent": "capital_agent", "slot": "before_tool", "name": "redirect_canada"},
    {"agent": "capital_agent", "slot": "after_tool", "name": "annotate_usa"},
    {"agent": "capital_agent", "slot": "callbacks", "name": "StepLogger"},
]


def rows() -> dict[str, tuple]:
    return {
        r.name: (r.dotted_path, r.model, r.tools, r.callbacks, r.sub_agents, r.available)
        for r in AgentRecord.objects.all()
    }


def test_migrate_mirrors_the_configured_agents() -> None:
    # post_migrate ran when the test database was created.
    assert {r.name for r in AgentRecord.objects.filter(available=True)} == {
        "capital_agent",
        "support_desk",
        "data_agent",
        "analyst",
    }


def test_the_post_migrate_receiver_calls_the_mirror() -> None:
    AgentRecord.objects.all().delete()
    emit_post_migrate_signal(verbosity=0, interactive=False, db="default")
    assert AgentRecord.objects.filter(name="capital_agent", available=True).exists()


def test_the_mirror_describes_each_agent(settings) -> None:  # type: ignore[no-untyped-def]
    settings.AGENTDASH = {"AGENTS": [SAMPLES, f"{SAMPLES}:beta"]}
    agents_mirror()
    alpha = AgentRecord.objects.get(name="alpha")
    assert (alpha.dotted_path, alpha.model, alpha.tools) == (SAMPLES, "offline", ["lookup"])
    assert alpha.description == "The first sample."
    assert [(c["slot"], c["name"]) for c in alpha.callbacks] == [
        ("before_model", "guard"),
        ("callbacks", "CountCalls"),
    ]
    assert alpha.callbacks[1]["hooks"] == ["before_llm_call"]
    beta = AgentRecord.objects.get(name="beta")
    assert beta.model == "offline"  # a workflow agent shows its first LLM's model
    # beta_step turned the default callbacks off (callbacks=[]): nothing listed for it.
    assert beta.callbacks == [
        {"agent": "beta", "slot": "before_agent", "name": "audit-trail", "style": "adk"}
    ]
    assert beta.sub_agents == [
        {
            "name": "beta_step",
            "type": "LlmAgent",
            "description": "",
            "model": "offline",
            "tools": [],
            "sub_agents": [],
        }
    ]


def test_the_mirror_is_idempotent() -> None:
    agents_mirror()
    before = rows()
    ids = set(AgentRecord.objects.values_list("id", flat=True))
    agents_mirror()
    assert rows() == before
    assert set(AgentRecord.objects.values_list("id", flat=True)) == ids


def test_agents_no_longer_configured_are_marked_unavailable(settings) -> None:  # type: ignore[no-untyped-def]
    agents_mirror()
    settings.AGENTDASH = {"AGENTS": ["agentdash.demo.capital:root_agent"]}
    agents_mirror()
    available = dict(AgentRecord.objects.values_list("name", "available"))
    assert available == {
        "capital_agent": True,
        "support_desk": False,
        "data_agent": False,
        "analyst": False,
    }
    settings.AGENTDASH = {"AGENTS": ["agentdash.demo.support_desk:root_agent"]}
    agents_mirror()
    assert AgentRecord.objects.get(name="support_desk").available
    assert not AgentRecord.objects.get(name="capital_agent").available


def test_the_capital_agent_callbacks_have_their_names_and_slots() -> None:
    agents_mirror()
    record = AgentRecord.objects.get(name="capital_agent")
    assert [{k: c[k] for k in ("agent", "slot", "name")} for c in record.callbacks] == (
        CAPITAL_CALLBACKS
    )
    assert record.tools == ["get_capital_city"]
    assert record.model == "offline"


def test_the_support_desk_tree_is_mirrored() -> None:
    agents_mirror()
    record = AgentRecord.objects.get(name="support_desk")
    assert [s["name"] for s in record.sub_agents] == ["billing_agent", "tech_agent"]
    assert record.tools == [
        "lookup_invoice",
        "billing_policy",
        "reimburse_invoice",
        "check_service_status",
        "search_known_issues",
    ]
    assert {"agent": "support_desk", "slot": "before_agent", "name": "greet_customer"} in [
        {k: c[k] for k in ("agent", "slot", "name")} for c in record.callbacks
    ]


def test_a_bad_path_writes_nothing(settings) -> None:  # type: ignore[no-untyped-def]
    agents_mirror()
    before = rows()
    settings.AGENTDASH = {"AGENTS": ["nowhere:root_agent"]}
    with pytest.raises(Exception, match="nowhere"):
        agents_mirror()
    assert rows() == before


def test_sync_agents_command(settings) -> None:  # type: ignore[no-untyped-def]
    out = StringIO()
    call_command("sync_agents", stdout=out)
    assert "4 agent(s) mirrored." in out.getvalue()
    assert "capital_agent  (agentdash.demo.capital:root_agent, model offline)" in out.getvalue()
    settings.AGENTDASH = {"AGENTS": ["nowhere:root_agent"]}
    with pytest.raises(CommandError, match="'nowhere:root_agent'"):
        call_command("sync_agents", stdout=out)
