"""``manage.py rollups --rebuild``: count every stored model and tool call anew into the step
rollups the Monitor reads (``spans.rollups``) — after restoring spans from a backup, or
writing them by hand. The span store keeps them itself otherwise."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import transaction

from agentdash.spans.rollups import rollups_rebuild


class Command(BaseCommand):
    help = "Count every stored model and tool call anew into the Monitor's rollups."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--rebuild", action="store_true", help="Empty and recount them.")

    def handle(self, *args: Any, **options: Any) -> None:
        if not options["rebuild"]:
            raise CommandError("say --rebuild: the rollups are emptied and counted anew")
        with transaction.atomic():
            counted = rollups_rebuild()
        self.stdout.write(f"{counted} calls counted into the rollups.")
