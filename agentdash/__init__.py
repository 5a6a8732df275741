"""AgentDash, the Django project: persistence, auth, admin and the dashboard around ``runtime``.

Importing the package does nothing else (the demo agents import without Django or Celery);
the entry points — ``asgi.py``, ``manage.py``, ``celery -A agentdash.celery_app`` — load the
Celery app (docs/ARCHITECTURE.md)."""
