#!/usr/bin/env python
"""Django's command-line utility for AgentDash."""

import os
import sys


def main() -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "agentdash.settings")
    from django.core.management import execute_from_command_line

    import agentdash.celery_app  # noqa: F401  (a run submitted from a command reaches its broker)

    execute_from_command_line(sys.argv)


if __name__ == "__main__":
    main()
