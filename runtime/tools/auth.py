"""Credentials a tool asks the user for."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict

REQUEST_CREDENTIAL_FUNCTION = "adk_request_credential"
"""Name of the function call the runtime emits to ask the client for a credential."""


class AuthConfig(BaseModel):
    """What a tool needs to authenticate.

    ``credential_key`` names the credential in state; the client answers the
    ``adk_request_credential`` call with a function response carrying ``exchanged_auth_credential``
    and the runtime makes it available through ``ToolContext.get_auth_response`` for the rest of
    that invocation.
    """

    model_config = ConfigDict(extra="allow")

    auth_scheme: Any = None
    raw_auth_credential: Any = None
    exchanged_auth_credential: Any = None
    credential_key: str = "default"

    @property
    def state_key(self) -> str:
        return f"temp:auth:{self.credential_key}"
