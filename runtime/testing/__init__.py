"""Test support: fakes that speak real wire formats, for tests of the runtime's real paths."""
