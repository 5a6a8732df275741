"""``manage.py ingest_key create|revoke|list``: ingest keys from the command line (the same
audited services as the admin)."""

from __future__ import annotations

from typing import Any

from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError, CommandParser

from agentdash.ingest.keys import ingest_key_create, ingest_key_revoke
from agentdash.ingest.models import IngestKey


class Command(BaseCommand):
    help = "Create, revoke or list the ingest keys OTLP senders use (/v1/traces)."

    def add_arguments(self, parser: CommandParser) -> None:
        verbs = parser.add_subparsers(dest="verb", required=True)
        create = verbs.add_parser("create", help="a new key; prints it (shown only this once)")
        create.add_argument("--owner", required=True, help="username whose sessions it writes")
        create.add_argument("--project", required=True, help="the sessions' app name")
        create.add_argument("--name", default="", help="what it is for (default: the project)")
        revoke = verbs.add_parser("revoke", help="refuse a key from now on")
        revoke.add_argument("prefix", help="the key's prefix (its first 12 characters)")
        verbs.add_parser("list", help="every key: prefix, state, owner, project, name")

    def handle(self, *args: Any, **options: Any) -> None:
        verb = options["verb"]
        if verb == "create":
            owner = get_user_model().objects.filter(username=options["owner"]).first()
            if owner is None:
                raise CommandError(f"no user {options['owner']!r}")
            try:
                _, raw = ingest_key_create(
                    name=options["name"] or options["project"],
                    project=options["project"],
                    owner=owner,
                    actor=None,
                )
            except ValidationError as exc:
                raise CommandError("; ".join(exc.messages)) from None
            self.stdout.write(raw)
        elif verb == "revoke":
            key = IngestKey.objects.filter(prefix=options["prefix"][:12]).first()
            if key is None:
                raise CommandError(f"no key with prefix {options['prefix']!r}")
            ingest_key_revoke(key=key, actor=None, reason="revoked with manage.py ingest_key")
            self.stdout.write(f"revoked {key.prefix}")
        else:
            for key in IngestKey.objects.select_related("owner"):
                state = "revoked" if key.revoked_at else "active"
                self.stdout.write(
                    f"{key.prefix}  {state:7}  {key.owner.get_username()}  {key.project}  "
                    f"{key.name}"
                )
