"""The live pipeline as the runs app's stream (``runs.streaming.RunStream``)."""

from __future__ import annotations

from agentdash.live.pipeline import live_pipeline


class PipelineRunStream:
    """Streams this process's runs through its pipeline (``live_pipeline()``, looked up at
    each call: tests replace and restart it)."""

    def start(self) -> None:
        """Install the span processor and start the flusher (on the running loop, or on a
        loop of its own with a network channel layer: ``LivePipeline.launch``)."""
        live_pipeline().install().launch()

    async def stop(self) -> None:
        await live_pipeline().stop()

    def run_started(self, *, session_id: str, invocation_id: str, run_id: int) -> None:
        live_pipeline().writer.learn(
            session_id=session_id, invocation_id=invocation_id, run_id=run_id
        )

    async def publish_partial(
        self, *, session_id: str, run_id: int, invocation_id: str, author: str, text: str
    ) -> None:
        await live_pipeline().publish_partial(
            session_id=session_id,
            run_id=run_id,
            invocation_id=invocation_id,
            author=author,
            text=text,
        )

    async def backpressure(self) -> None:
        await live_pipeline().backpressure()

    async def settle(self, invocation_id: str) -> None:
        await live_pipeline().settle(invocation_id)

    def run_ended(self, *, session_id: str) -> None:
        live_pipeline().hurry_threadsafe()
