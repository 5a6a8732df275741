"""AgentDash, the Django project. Its Celery app is loaded with the package (Celery's Django
convention): the runs app's shared task then binds to it in every process that submits runs,
and the app itself is never imported from below (docs/ARCHITECTURE.md)."""

from agentdash.celery_app import app as celery_app

__all__ = ("celery_app",)
