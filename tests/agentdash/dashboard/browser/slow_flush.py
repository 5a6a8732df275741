"""daphne whose live flushes each take ``AGENTDASH_TEST_FLUSH_DELAY_S`` seconds longer (a
slow database, as a loaded PostgreSQL is), for the browser test of span previews:

  python -m tests.agentdash.dashboard.browser.slow_flush <daphne's arguments>
"""

from __future__ import annotations

import os
import sys
import time
from typing import Any


def main() -> None:
    import django

    django.setup()
    from daphne.cli import CommandLineInterface

    from agentdash.live.flush_writer import FlushWriter

    delay = float(os.environ.get("AGENTDASH_TEST_FLUSH_DELAY_S", "1.0"))
    write = FlushWriter.write

    def slow_write(self: FlushWriter, *args: Any, **kwargs: Any) -> Any:
        time.sleep(delay)
        return write(self, *args, **kwargs)

    FlushWriter.write = slow_write  # type: ignore[method-assign]
    sys.argv = ["daphne", *sys.argv[1:]]
    CommandLineInterface.entrypoint()


if __name__ == "__main__":
    main()
