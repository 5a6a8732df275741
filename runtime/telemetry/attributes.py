"""Span attribute keys: OTel GenAI semantic conventions, and ours under ``agentdash.*``."""

from __future__ import annotations


class GenAI:
    """Keys from the OpenTelemetry GenAI conventions (as any-agent's ``GenAI`` names them)."""

    OPERATION_NAME = "gen_ai.operation.name"
    PROVIDER_NAME = "gen_ai.provider.name"
    AGENT_NAME = "gen_ai.agent.name"
    AGENT_DESCRIPTION = "gen_ai.agent.description"
    CONVERSATION_ID = "gen_ai.conversation.id"
    REQUEST_MODEL = "gen_ai.request.model"
    RESPONSE_MODEL = "gen_ai.response.model"
    USAGE_INPUT_TOKENS = "gen_ai.usage.input_tokens"
    USAGE_OUTPUT_TOKENS = "gen_ai.usage.output_tokens"
    USAGE_CACHE_READ_INPUT_TOKENS = "gen_ai.usage.cache_read.input_tokens"
    """Input tokens served from the provider's cache; counted in ``USAGE_INPUT_TOKENS`` too."""
    USAGE_REASONING_OUTPUT_TOKENS = "gen_ai.usage.reasoning.output_tokens"
    """Output tokens the model spent thinking; counted in ``USAGE_OUTPUT_TOKENS`` too."""
    RESPONSE_FINISH_REASONS = "gen_ai.response.finish_reasons"
    RESPONSE_TIME_TO_FIRST_TOKEN = "gen_ai.response.time_to_first_token"
    """Seconds from a streamed model call's request to its first chunk (Sentry's span
    attribute; OpenTelemetry names the same measure as the metric
    ``gen_ai.client.operation.time_to_first_chunk``). Only on calls that streamed."""
    TOOL_NAME = "gen_ai.tool.name"
    TOOL_CALL_ID = "gen_ai.tool.call.id"
    TOOL_TYPE = "gen_ai.tool.type"
    TOOL_DESCRIPTION = "gen_ai.tool.description"
    TOOL_ARGS = "gen_ai.tool.call.arguments"
    TOOL_OUTPUT = "gen_ai.tool.call.result"
    INPUT_MESSAGES = "gen_ai.input.messages"
    OUTPUT_MESSAGES = "gen_ai.output.messages"
    SYSTEM_INSTRUCTIONS = "gen_ai.system_instructions"
    TOOL_DEFINITIONS = "gen_ai.tool.definitions"
    """The tools declared to the model: ``[{type: "function", name, description, parameters}]``
    (``parameters`` a JSON Schema), recorded with the message content."""


class Operation:
    INVOKE_AGENT = "invoke_agent"
    GENERATE_CONTENT = "generate_content"
    EXECUTE_TOOL = "execute_tool"


class StepKind:
    """What a span is a step of (``agentdash.span.kind``): the one list of kinds. The server's
    summaries, the ingest mapping and the pages' registry (``span_kinds.js``, its labels and
    colours) are held to it by tests; docs/ARCHITECTURE.md says how to add one."""

    INVOCATION = "invocation"
    AGENT = "agent"
    MODEL = "model"
    TOOL = "tool"
    CALLBACK = "callback"
    ALL = (INVOCATION, AGENT, MODEL, TOOL, CALLBACK)
    BY_NAME_PREFIX = (
        ("invoke_agent", AGENT),
        ("generate_content", MODEL),
        ("execute_tool", TOOL),
        ("callback", CALLBACK),
    )
    """A span of ours without the attribute: its kind from the operation its name starts with."""


class AgentDash:
    """Our own keys."""

    INVOCATION_ID = "agentdash.invocation.id"
    EVENT_ID = "agentdash.event.id"
    USER_ID = "agentdash.user.id"
    APP_NAME = "agentdash.app.name"
    BRANCH = "agentdash.branch"
    SPAN_KIND = "agentdash.span.kind"  # one of StepKind.ALL
    CALLBACK_NAME = "agentdash.callback.name"
    CALLBACK_HOOK = "agentdash.callback.hook"
    CALLBACK_OUTCOME = "agentdash.callback.outcome"
    CALLBACK_STYLE = "agentdash.callback.style"  # adk | any-agent
    CALLBACK_RETURNED = "agentdash.callback.returned"
    """On an ``overridden`` callback's span: what it returned (JSON; a model response or a
    content in the GenAI message shape), recorded with the message content."""
    CALLBACK_REPLACED = "agentdash.callback.replaced"
    """On an ``overridden`` after/error callback's span: what its return value replaced (the
    model's response, the tool's result, or the error's text), recorded with the content."""
    SKIPPED_BY = "agentdash.skipped_by"  # callback that short-circuited this step
    REPLACED_BY = "agentdash.replaced_by"  # callback that replaced this step's result
    STEP_SUMMARY = "agentdash.step.summary"
    STATE_DELTA = "agentdash.state.delta"
    TRANSFER_TO = "agentdash.transfer_to_agent"
    ESCALATE = "agentdash.escalate"
    LONG_RUNNING = "agentdash.tool.long_running"
    TOOL_IDENTITY = "agentdash.tool.identity"
    BREAKPOINT = "agentdash.breakpoint"
    """Whom the tool acted as: ``agent`` (the service identity) or ``user`` (the session's
    owner); see ``runtime.tools.identity``."""
    TOOL_PRINCIPAL = "agentdash.tool.principal"
    """The id the tool acted as: the service identity, or the user id."""
    MODEL_OFFLINE = "agentdash.model.offline"
    MODEL_SAFETY_SETTINGS = "agentdash.model.safety_settings"
    """The request's ``safety_settings`` (category → threshold), as JSON."""
    CODE_LANGUAGE = "agentdash.code.language"
    CODE_INPUT = "agentdash.code.input"
    """The code run (with the message content)."""
    CODE_STDOUT = "agentdash.code.stdout"
    CODE_STDERR = "agentdash.code.stderr"
    """What the code printed (with the message content)."""
    CODE_EXIT_CODE = "agentdash.code.exit_code"
    CODE_STOPPED_BY = "agentdash.code.stopped_by"
    """The limit the sandbox stopped the run at, from its own evidence
    (sandbox.SandboxOutcome); unset when none did: the code ended by itself."""
    CODE_SANDBOX = "agentdash.code.sandbox"
    CODE_CONTAINMENT = "agentdash.code.containment"
    """How the run was held: ``cgroup v2``, ``cgroup v1``, or ``weak: …`` (per-process limits
    only, an operator's choice where no cgroup could be had)."""
    CODE_USAGE = "agentdash.code.usage"
    """What the run used, as the sandbox measured it (CPU ms, memory peak, files), as JSON."""
    CODE_LIMITS = "agentdash.code.limits"
    """The run's limits, as JSON."""
    CODE_DURATION_MS = "agentdash.code.duration_ms"
    GUARDRAIL_NAME = "agentdash.guardrail.name"
    GUARDRAIL_DECISION = "agentdash.guardrail.decision"
    """What a guardrail decided on this step: one of :class:`Decision`."""
    GUARDRAIL_REASON = "agentdash.guardrail.reason"
    INSTRUCTION_VERSION = "agentdash.instruction.version"
    """On a model call: the version of the agent's instruction it was given, when the
    instruction's provider named one (a stored instruction: ``v3``, or ``code``)."""
    GUARDRAIL_POLICY = "agentdash.guardrail.policy"
    """The policy the decision was made under: its name, ``@`` its version when known."""
    ERROR_MESSAGE = "agentdash.error.message"
    CANCELLED = "agentdash.cancelled"
    """True on a span that ended because its run was cancelled (the cancellation passed
    through it): a stop someone asked for, not a failure of the step."""
    STORAGE_REPLACED = "agentdash.storage.replaced"
    """Set by the store on what it kept: how many characters it could not store as they were
    (NUL, lone surrogates → U+FFFD) plus how many too-deep values it cut."""
    STORAGE_ERROR = "agentdash.storage.error"
    """Set on a span stored in reduced form: why its full version could not be stored."""
    STORAGE_DROPPED = "agentdash.storage.dropped"
    """Set on the error span that stands for a span the store could not keep at all."""
    INGEST_ADDED = "agentdash.ingest.added"
    """Set by OTLP ingest on a span from outside: the keys it added (the runtime's names for
    what the sender named otherwise, e.g. ``gen_ai.request.model`` from ``llm.model_name``).
    An OTLP export leaves them, and this key, out: the sender's attributes go back as sent."""
    INGEST_SENT = "agentdash.ingest.sent."
    """Prefix of what a sender set under a key OTLP ingest replaced (a value in another shape
    than the GenAI conventions'): ``agentdash.ingest.sent.<key>``. An OTLP export puts it
    back under ``<key>``."""
    INGEST_LOG = "agentdash.ingest.log"
    """True on a span event that came as an OTLP log record of that span (``/v1/logs``): an
    OTLP export of the span leaves it out (it was a log, not an event of the span)."""


class Decision:
    """What a guardrail decided (``agentdash.guardrail.decision``)."""

    ALLOWED = "allowed"
    BLOCKED = "blocked"
    REDACTED = "redacted"
    UNSAFE = "unsafe"
    LIMIT = "limit"
    ALL = (ALLOWED, BLOCKED, REDACTED, UNSAFE, LIMIT)


class Outcome:
    PASSED = "passed"
    OVERRIDDEN = "overridden"
    RAISED = "raised"
    DISABLED = "disabled"


CONTENT_CAPTURE = "gen_ai.content_capture"
"""Switchboard name of the built-in step that records message content on spans."""
