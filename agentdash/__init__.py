"""AgentDash, the Django project: persistence, auth, admin and the dashboard around ``runtime``."""
