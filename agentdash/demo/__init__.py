"""Demo agents. Each module exposes ``root_agent`` and imports without Django being set up;
only the data agent's policy lookup, at call time, needs it."""
