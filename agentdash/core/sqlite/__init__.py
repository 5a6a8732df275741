"""SQLite for the embedded default: Django's backend with in-process writer queueing (``base``)."""
