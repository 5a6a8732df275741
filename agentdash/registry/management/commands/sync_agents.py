"""``manage.py sync_agents``: mirror the configured agents into the database."""

from __future__ import annotations

from typing import Any

from django.core.exceptions import ImproperlyConfigured
from django.core.management.base import BaseCommand, CommandError

from agentdash.registry.services import agents_mirror


class Command(BaseCommand):
    help = "Load every agent in AGENTDASH['AGENTS'] and mirror it in the database (idempotent)."

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            records = agents_mirror()
        except ImproperlyConfigured as exc:
            raise CommandError(str(exc)) from exc
        for record in records:
            self.stdout.write(f"{record.name}  ({record.dotted_path}, model {record.model})")
        self.stdout.write(self.style.SUCCESS(f"{len(records)} agent(s) mirrored."))
