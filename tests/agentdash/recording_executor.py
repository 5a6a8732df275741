"""An executor for tests that keeps the run ids it is handed and runs nothing."""

from __future__ import annotations


class RecordingExecutor:
    """Takes run ids and keeps them: nothing runs."""

    name = "recording"

    def __init__(self) -> None:
        self.submitted: list[int] = []

    def submit(self, run_id: int) -> None:
        self.submitted.append(run_id)

    async def astart(self) -> None:
        pass
