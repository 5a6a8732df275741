from runtime.telemetry.attributes import GenAI
from runtime.telemetry.tracing import LiveSpan, tracer

__all__ = ["GenAI", "LiveSpan", "tracer"]
