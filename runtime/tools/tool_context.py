"""What tools and tool callbacks get."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from runtime.contexts.callback_context import CallbackContext
from runtime.events.event_actions import EventActions
from runtime.tools.auth import AuthConfig
from runtime.tools.identity import AGENT, USER, Identity, Principal, checked_identity
from runtime.tools.tool_confirmation import ToolConfirmation

if TYPE_CHECKING:
    from runtime.contexts.invocation_context import InvocationContext
    from runtime.memory import SearchMemoryResponse


class ToolContext(CallbackContext):
    """A :class:`CallbackContext` for one function call.

    ``actions`` lets a tool steer the flow: ``skip_summarization`` makes its result the final
    response, ``transfer_to_agent`` hands over to another agent, ``escalate`` ends a loop.
    ``identity`` is whom the called tool acts as (its ``identity``; ``"agent"`` when there is
    no tool), and ``principal`` the matching one of ``agent_principal``/``user_principal``.
    """

    __slots__ = ("function_call_id", "identity", "tool_confirmation")

    def __init__(
        self,
        invocation_context: InvocationContext,
        *,
        function_call_id: str | None = None,
        event_actions: EventActions | None = None,
        identity: Identity = AGENT,
        tool_confirmation: ToolConfirmation | None = None,
    ) -> None:
        super().__init__(invocation_context, event_actions)
        self.function_call_id = function_call_id
        self.identity: Identity = checked_identity(identity)
        self.tool_confirmation = tool_confirmation
        """A person's answer to this call's confirmation request, when it is run again after
        one (ADK's ``tool_context.tool_confirmation``); ``None`` the first time."""

    def request_confirmation(self, *, hint: str | None = None, payload: Any = None) -> None:
        """Ask a person to confirm this call (with ``hint``, and ``payload`` for them to fill
        in or edit): the run pauses with an ``adk_request_confirmation`` call and this tool
        runs again with ``tool_confirmation`` set once they answer."""
        if not self.function_call_id:
            raise ValueError("request_confirmation needs a function call id")
        self.actions.requested_tool_confirmations[self.function_call_id] = ToolConfirmation(
            hint=hint or "", payload=payload
        )

    @property
    def user_principal(self) -> Principal:
        """The user who owns the session (its ``user_id``)."""
        return Principal(USER, self._invocation_context.user_id)

    @property
    def agent_principal(self) -> Principal:
        """The agent itself: the runner's ``service_identity``."""
        return Principal(AGENT, self._invocation_context.service_identity)

    @property
    def principal(self) -> Principal:
        """Whom the running tool acts as: the user for a ``"user"`` tool, else the agent. A
        user tool reaches only what this principal may reach."""
        return self.user_principal if self.identity == USER else self.agent_principal

    def request_credential(self, auth_config: AuthConfig) -> None:
        """Ask the user for a credential: the invocation pauses with an
        ``adk_request_credential`` function call the client answers."""
        if not self.function_call_id:
            raise ValueError("request_credential needs a function call id")
        self.actions.requested_auth_configs[self.function_call_id] = auth_config

    def get_auth_response(self, auth_config: AuthConfig) -> Any:
        """The credential the user supplied for ``auth_config``, or ``None``."""
        return self.state.get(auth_config.state_key)

    async def search_memory(self, query: str) -> SearchMemoryResponse:
        """Search the user's past sessions (needs ``memory_service=`` on the Runner)."""
        ictx = self._invocation_context
        if ictx.memory_service is None:
            raise ValueError("no memory service: pass memory_service= to the Runner")
        return await ictx.memory_service.search_memory(
            app_name=ictx.app_name, user_id=ictx.user_id, query=query
        )
