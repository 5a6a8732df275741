"""The public binding of guardrails and tools to the stored policies
(``agentdash.controls.agent_policies``): what an agent reads, and that an unreadable policy is
one error, ``runtime.guardrails.PolicyUnavailableError``, on which the caller refuses."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from django.db import connection

from agentdash.controls.agent_policies import DatabaseRateCounter, stored_config, stored_policy
from agentdash.controls.models import Policy, RateWindow
from runtime.guardrails import PolicyUnavailableError, PolicyView, StepLimits

pytestmark = pytest.mark.django_db(transaction=True)  # the runtime reads from worker threads


class _Ctx:
    agent_name = "data_agent"


@pytest.fixture
def unreadable_policies() -> Iterator[None]:
    """The policies' table gone, for real; made again after the test."""
    with connection.schema_editor() as editor:
        editor.delete_model(Policy)
    yield
    with connection.schema_editor() as editor:
        editor.create_model(Policy)


def test_stored_config_is_the_enabled_policy_attached_to_the_agent() -> None:
    assert stored_config(agent_name="data_agent", kind="query") is None
    Policy.objects.create(name="other", kind="query", config={"tables": ["x"]}, agents=["b"])
    Policy.objects.create(
        name="q", kind="query", config={"tables": ["orders"]}, agents=["data_agent"]
    )
    assert stored_config(agent_name="data_agent", kind="query") == {"tables": ["orders"]}


async def test_a_guardrail_source_reads_name_version_and_config() -> None:
    source = stored_policy("step_limits")
    assert await source(_Ctx()) is None  # type: ignore[arg-type]
    policy = await Policy.objects.acreate(
        name="short", kind="step_limits", config={"max_steps": 3}, agents=["data_agent"]
    )
    view = await source(_Ctx())  # type: ignore[arg-type]
    assert view == PolicyView(config={"max_steps": 3}, name="short", version=policy.version)


def test_an_unreadable_table_is_the_runtimes_error(unreadable_policies: None) -> None:
    with pytest.raises(PolicyUnavailableError, match="the query policy could not be read"):
        stored_config(agent_name="data_agent", kind="query")


async def test_a_guardrail_fails_closed_on_an_unreadable_table(unreadable_policies: None) -> None:
    with pytest.raises(PolicyUnavailableError, match=r"no such table|does not exist"):
        await StepLimits(stored_policy("step_limits")).policy(_Ctx())  # type: ignore[arg-type]


async def test_the_rate_counter_counts_in_the_database() -> None:
    counter = DatabaseRateCounter()
    assert await counter.hit("k", limit=2, window_s=60) is None
    assert await counter.hit("k", limit=2, window_s=60) is None
    wait = await counter.hit("k", limit=2, window_s=60)
    assert wait is not None and 0 < wait <= 60
    assert await RateWindow.objects.acount() == 1  # one key, one window (the key is hashed)
