"""A module that fails while being imported (not a test module)."""

raise RuntimeError("the agent module is broken")
