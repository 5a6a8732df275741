"""Root agents registered by a test (``register`` fixture): set here as attributes named
after each agent, so ``AGENTDASH["AGENTS"]`` can name them."""
