"""Model names to classes: a class registered before any name was resolved does not hide the
built-in ones, and wins over them for the names it serves."""

from __future__ import annotations

import subprocess
import sys
import textwrap


def test_a_class_registered_first_leaves_the_builtins_and_wins_its_names() -> None:
    # A fresh interpreter: this process's registry has resolved names already.
    code = textwrap.dedent("""
        from typing import ClassVar
        from runtime.models import registry
        from runtime.models.base_llm import BaseLlm
        from runtime.models.offline_llm import OfflineLlm

        class Mine(BaseLlm):
            model: str = "offline-mine"
            provider: ClassVar[str] = "mine"

            @classmethod
            def supported_models(cls):
                return [r"offline-mine", r"custom-.*"]

            async def generate_content_async(self, llm_request, stream=False):
                yield None

        registry.register(Mine)
        assert type(registry.resolve("offline")) is OfflineLlm
        assert type(registry.resolve("offline-mine")) is Mine  # offline(-.*)? too: later wins
        assert type(registry.resolve("custom-1")) is Mine
        assert type(registry.resolve("gemini-2.5-flash")).__name__ == "Gemini"
        print("ok")
    """)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.stdout.strip() == "ok", done.stderr
