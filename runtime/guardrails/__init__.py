"""Guardrails as named, switchable, policy-driven callbacks (ADK's safety guide, layer 2).

Each guardrail reads its policy when it runs (see :mod:`runtime.guardrails.policy`), records
its decision on its callback span (``agentdash.guardrail.*``: allowed, blocked, redacted,
unsafe, limit, with the reason and the policy's version) and fails closed when its policy
cannot be read:

- :class:`InputScreen` (``before_model``): blocked terms and patterns → a canned reply.
- :class:`ToolPolicy` (``before_tool``): allowed tools and argument rules → an error result.
- :class:`OutputRedaction` (``after_model``): e-mail addresses, phone, card numbers and
  keys masked.
- :class:`StepLimits` (``before_model``, ``before_tool``): the run stops past its limit.
- :class:`RateLimit` (``before_tool``): calls per user and tool in a time window.
- :class:`LlmScreen`: a model judging input, tool calls and output.
"""

from runtime.guardrails.input_screen import InputScreen, InputScreenConfig
from runtime.guardrails.limits import (
    InMemoryRateCounter,
    RateCounter,
    RateLimit,
    RateLimitConfig,
    StepLimitExceededError,
    StepLimits,
    StepLimitsConfig,
)
from runtime.guardrails.llm_screen import (
    DEFAULT_SCREEN_INSTRUCTION,
    LlmScreen,
    LlmScreenConfig,
    parse_verdict,
)
from runtime.guardrails.policy import (
    Guardrail,
    PolicySource,
    PolicyUnavailableError,
    PolicyView,
    config_problems,
    record_decision,
)
from runtime.guardrails.redaction import OutputRedaction, OutputRedactionConfig, redact_text
from runtime.guardrails.tool_policy import ToolPolicy, ToolPolicyConfig

__all__ = [
    "DEFAULT_SCREEN_INSTRUCTION",
    "Guardrail",
    "InMemoryRateCounter",
    "InputScreen",
    "InputScreenConfig",
    "LlmScreen",
    "LlmScreenConfig",
    "OutputRedaction",
    "OutputRedactionConfig",
    "PolicySource",
    "PolicyUnavailableError",
    "PolicyView",
    "RateCounter",
    "RateLimit",
    "RateLimitConfig",
    "StepLimitExceededError",
    "StepLimits",
    "StepLimitsConfig",
    "ToolPolicy",
    "ToolPolicyConfig",
    "config_problems",
    "parse_verdict",
    "record_decision",
    "redact_text",
]
