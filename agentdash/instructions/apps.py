"""Instructions: an agent's instruction kept as versioned configuration, edited while agents
run and read at each of their model calls (docs/INSTRUCTIONS.md)."""

from django.apps import AppConfig


class InstructionsConfig(AppConfig):
    name = "agentdash.instructions"
    label = "instructions"
    verbose_name = "Instructions"
