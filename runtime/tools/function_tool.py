"""Plain Python functions as tools."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from google.genai import types
from pydantic import BaseModel

from runtime.tools._declarations import HIDDEN_PARAMETERS, _hints, declaration_for
from runtime.tools.base_tool import BaseTool
from runtime.tools.identity import AGENT, Identity, declared_identity
from runtime.tools.sync_calls import run_sync
from runtime.tools.tool_confirmation import CONFIRMATION_REJECTED, CONFIRMATION_REQUIRED

if TYPE_CHECKING:
    from runtime.tools.tool_context import ToolContext


class FunctionTool(BaseTool):
    """Wraps ``func`` (sync or async) as a tool.

    The declaration comes from the signature, type hints and docstring; a ``tool_context``
    parameter is hidden from the model and filled by the runtime. When the model omits a
    required argument the tool is not run and the model gets an error dict telling it which
    arguments to supply. A non-dict return value is wrapped as ``{"result": value}`` by the
    agent. Sync functions run in a worker thread so they never block the event loop.
    ``identity`` defaults to what ``@acts_as`` declared on ``func``, else ``"agent"``.
    ``require_confirmation`` (ADK's): ``True``, or a function of the call's arguments
    returning whether this call needs a person's approval; such a call is not run until
    they approve it (see :mod:`runtime.tools.tool_confirmation`).
    """

    def __init__(
        self,
        func: Callable[..., Any],
        *,
        name: str | None = None,
        description: str | None = None,
        is_long_running: bool = False,
        identity: Identity | None = None,
        require_confirmation: bool | Callable[..., Any] = False,
    ) -> None:
        if not callable(func):
            raise TypeError(f"FunctionTool needs a callable, got {func!r}")
        super().__init__(
            name=name or str(getattr(func, "__name__", type(func).__name__)),
            description=description if description is not None else inspect.getdoc(func) or "",
            is_long_running=is_long_running,
            identity=identity if identity is not None else declared_identity(func) or AGENT,
        )
        self.func = func
        if not (isinstance(require_confirmation, bool) or callable(require_confirmation)):
            raise TypeError(
                "require_confirmation must be a bool or a function of the call's arguments, "
                f"not {type(require_confirmation).__name__}"
            )
        self.require_confirmation = require_confirmation
        # The Signature, not its ``parameters`` mappingproxy: a tool held in an LlmRequest's
        # tools_dict must deep-copy and pickle as ADK's does.
        self._signature = inspect.signature(func)
        params = self._signature.parameters
        self._accepts_any = any(p.kind is p.VAR_KEYWORD for p in params.values())
        self._required = [
            n
            for n, p in params.items()
            if n not in HIDDEN_PARAMETERS
            and p.default is inspect.Parameter.empty
            and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
        ]
        self._hints = _hints(func)
        self._declaration: types.FunctionDeclaration | None = None

    def get_declaration(self) -> types.FunctionDeclaration:
        """A fresh copy each call (as ADK's): a callback that edits the declaration in its
        request edits that request only, not the tool nor later requests."""
        if self._declaration is None:
            self._declaration = declaration_for(
                self.func, name=self.name, description=self.description
            )
        return self._declaration.model_copy(deep=True)

    def _coerce(self, name: str, value: Any) -> Any:
        hint = self._hints.get(name)
        if isinstance(hint, type) and issubclass(hint, BaseModel) and isinstance(value, dict):
            return hint.model_validate(value)
        return value

    async def run_async(self, *, args: dict[str, Any], tool_context: ToolContext) -> Any:
        missing = [p for p in self._required if p not in args]
        if missing:
            return {
                "error": (
                    f"Tool {self.name} was not run: required argument(s) "
                    f"{', '.join(missing)} missing. Call it again with every required argument."
                )
            }
        params = self._signature.parameters
        kwargs = {
            k: self._coerce(k, v)
            for k, v in args.items()
            if (k in params or self._accepts_any) and k not in HIDDEN_PARAMETERS
        }
        if "tool_context" in params:
            kwargs["tool_context"] = tool_context
        if await self._needs_confirmation(kwargs, tool_context):
            confirmation = tool_context.tool_confirmation
            if confirmation is None:
                tool_context.request_confirmation(
                    hint=f"Please approve or reject the tool call {self.name}() by responding "
                    "with a FunctionResponse with an expected ToolConfirmation payload."
                )
                return {"error": CONFIRMATION_REQUIRED}
            if not confirmation.confirmed:
                return {"error": CONFIRMATION_REJECTED}
        if inspect.iscoroutinefunction(self.func) or inspect.iscoroutinefunction(
            type(self.func).__call__
        ):
            result = await self.func(**kwargs)
        else:
            result = await run_sync(self.func, **kwargs)  # off the loop, many per hand-over
            if inspect.isawaitable(result):
                result = await result
        return result

    async def _needs_confirmation(self, kwargs: dict[str, Any], tool_context: ToolContext) -> bool:
        """``require_confirmation`` for this call: the flag, or the function's answer for these
        arguments (given those of its parameters it names, ``tool_context`` too)."""
        rule = self.require_confirmation
        if isinstance(rule, bool):
            return rule
        params = inspect.signature(rule).parameters
        takes_any = any(p.kind is p.VAR_KEYWORD for p in params.values())
        given = {k: v for k, v in kwargs.items() if takes_any or k in params}
        answer = rule(**given)
        if inspect.isawaitable(answer):
            answer = await answer
        return bool(answer)


class LongRunningFunctionTool(FunctionTool):
    """A function that starts work finishing later.

    The invocation pauses after the call (with the function's interim result, if it returned
    one); it resumes when a later message carries a ``FunctionResponse`` with the same id.
    """

    def __init__(self, func: Callable[..., Any], **kwargs: Any) -> None:
        super().__init__(func, is_long_running=True, **kwargs)

    def get_declaration(self) -> types.FunctionDeclaration:
        declaration = super().get_declaration()
        note = (
            "This operation runs for a long time. If it already returned a pending or "
            "intermediate status, do not call it again for the same request."
        )
        if note not in (declaration.description or ""):
            declaration.description = f"{declaration.description or ''}\n\n{note}".strip()
        return declaration
