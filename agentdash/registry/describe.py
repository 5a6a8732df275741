"""What an agent tree is made of, as plain data: model, tools, callbacks, sub-agents.

Pure functions over loaded agent objects; the mirror stores their output and the selectors
return it. Nothing here runs an agent or calls a model.
"""

from __future__ import annotations

from typing import Any

from runtime import BaseAgent, LlmAgent, callback_name
from runtime.callbacks.any_agent import HOOKS, overrides

ANY_AGENT_SLOT = "callbacks"


def agent_model_name(*, agent: BaseAgent) -> str:
    """The model an agent uses (its canonical model's ``.model``, e.g. ``"offline"`` or
    ``"gemini-2.5-flash"``); for a workflow agent, that of its first LLM descendant; ``""``
    when there is none."""
    llm = next((a for a in agent.walk() if isinstance(a, LlmAgent)), None)
    if llm is None:
        return ""
    try:
        return str(llm.canonical_model.model)
    except Exception:  # unresolvable model string: show what was configured
        return str(llm.model) if isinstance(llm.model, str) else type(llm.model).__name__


def agent_tool_names(*, agent: BaseAgent) -> list[str]:
    """Tool names of the whole tree, first occurrence first (``transfer_to_agent``, which the
    runtime adds by itself, is not listed)."""
    names: list[str] = []
    for node in agent.walk():
        for tool in getattr(node, "tools", []) if isinstance(node, LlmAgent) else []:
            if tool.name not in names:
                names.append(tool.name)
    return names


def _as_list(value: Any) -> list[Any]:
    if value is None:
        return []
    return list(value) if isinstance(value, list | tuple) else [value]


def agent_callback_list(*, agent: BaseAgent) -> list[dict[str, Any]]:
    """Every callback in the tree, in tree then slot order.

    ADK-style: ``{agent, slot, name, style: "adk"}`` with ``slot`` one of ``before_agent``,
    ``after_agent``, ``before_model``, … (``LlmAgent.named_callbacks()`` order). any-agent
    style: ``{agent, slot: "callbacks", name, style: "any-agent", hooks}``, ``hooks`` being the
    hooks the callback implements. ``name`` is what the switchboard toggles.
    """
    out: list[dict[str, Any]] = []
    for node in agent.walk():
        if isinstance(node, LlmAgent):
            slots = [
                (slot, [c.name for c in named]) for slot, named in node.named_callbacks().items()
            ]
        else:
            slots = [
                ("before_agent", [callback_name(c) for c in _as_list(node.before_agent_callback)]),
                ("after_agent", [callback_name(c) for c in _as_list(node.after_agent_callback)]),
            ]
        for slot, names in slots:
            out.extend({"agent": node.name, "slot": slot, "name": n, "style": "adk"} for n in names)
        for cb in node.callbacks:
            hooks = [h for h in HOOKS if overrides(cb, h)]
            out.append(
                {
                    "agent": node.name,
                    "slot": ANY_AGENT_SLOT,
                    "name": callback_name(cb),
                    "style": "any-agent",
                    "hooks": hooks,
                }
            )
    return out


def agent_tree(*, agent: BaseAgent) -> dict[str, Any]:
    """``{name, type, description, model, tools, sub_agents: [...]}``, recursively."""
    tools = [t.name for t in agent.tools] if isinstance(agent, LlmAgent) else []
    return {
        "name": agent.name,
        "type": type(agent).__name__,
        "description": agent.description,
        "model": agent_model_name(agent=agent) if isinstance(agent, LlmAgent) else "",
        "tools": tools,
        "sub_agents": [agent_tree(agent=sub) for sub in agent.sub_agents],
    }
