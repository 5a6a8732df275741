"""What the instruction's binding and its Django side both name, importable without Django."""

CODE = "code"
"""The version a model call names while its agent has no stored version: the instruction
written in the agent's code."""


class InstructionUnavailableError(RuntimeError):
    """The stored instruction could not be read; the model call fails with it."""
