from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.agentdash.ingest.ingest_server import embedded_server


@pytest.fixture
def server(tmp_path: Path) -> Iterator[tuple[str, dict[str, str]]]:
    """A real daphne on the embedded default: (its base URL, its environment)."""
    with embedded_server(tmp_path) as found:
        yield found
