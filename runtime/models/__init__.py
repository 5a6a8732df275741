from runtime.models.base_llm import BaseLlm
from runtime.models.llm_request import LlmRequest
from runtime.models.llm_response import LlmResponse
from runtime.models.scripted_llm import ScriptedLlm

__all__ = ["BaseLlm", "Gemini", "LlmRequest", "LlmResponse", "OfflineLlm", "ScriptedLlm"]


def __getattr__(name: str) -> object:
    # Gemini and OfflineLlm load on first use: google-genai's client is not needed otherwise.
    if name == "Gemini":
        from runtime.models.gemini import Gemini

        return Gemini
    if name == "OfflineLlm":
        from runtime.models.offline_llm import OfflineLlm

        return OfflineLlm
    raise AttributeError(name)
