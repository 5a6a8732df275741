from runtime.callbacks.any_agent import Callback, Context
from runtime.callbacks.default_callbacks import StepLogger, get_default_callbacks
from runtime.callbacks.naming import callback_name, named
from runtime.callbacks.switchboard import AllEnabled, InMemorySwitchboard, Switchboard

__all__ = [
    "AllEnabled",
    "Callback",
    "Context",
    "InMemorySwitchboard",
    "StepLogger",
    "Switchboard",
    "callback_name",
    "get_default_callbacks",
    "named",
]
