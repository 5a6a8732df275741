"""``manage.py seed_demo``: demo accounts and data, for development only."""

from __future__ import annotations

from typing import Any

from django.core.exceptions import ImproperlyConfigured
from django.core.management.base import BaseCommand, CommandError

from agentdash.demo.seed import DEFAULT_DEMO_PASSWORD, DemoSeedRefusedError, demo_seed


class Command(BaseCommand):
    help = (
        "Create or update the demo accounts alice, bob, operator (Operators group) and admin "
        "(superuser), the data agent's default query policy, and the agent mirror. The "
        "password is AGENTDASH_DEMO_PASSWORD, or 'agentdash-demo' when unset. Refuses to run "
        "with DEBUG off."
    )

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            result = demo_seed()
        except (DemoSeedRefusedError, ImproperlyConfigured) as exc:
            raise CommandError(str(exc)) from exc
        if result.created:
            self.stdout.write(f"Created: {', '.join(result.created)}")
        if result.updated:
            self.stdout.write(f"Updated: {', '.join(result.updated)}")
        if result.password_is_default:
            self.stdout.write(
                f"Password for every demo account: {DEFAULT_DEMO_PASSWORD} "
                "(the documented default; set AGENTDASH_DEMO_PASSWORD to choose another)"
            )
        else:
            self.stdout.write(
                "Password for every demo account: the value of AGENTDASH_DEMO_PASSWORD"
            )
        if result.policy_created:
            self.stdout.write("Created the data agent's default query policy.")
        if result.guardrail_policies_created:
            names = ", ".join(result.guardrail_policies_created)
            self.stdout.write(f"Created the demo guardrail policies: {names}.")
        if result.judge_rule_created:
            self.stdout.write("Created the online judge of the support desk's runs (half of them).")
        self.stdout.write(self.style.SUCCESS(f"Agents mirrored: {', '.join(result.agents)}"))
