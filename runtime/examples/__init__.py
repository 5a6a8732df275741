"""Small agents that run anywhere: ``python -m runtime chat runtime.examples.capital:root_agent``."""
