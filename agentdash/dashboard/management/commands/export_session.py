"""``manage.py export_session <session_id> [--trace <trace_id>] [--format session|otlp]
[--encoding json|protobuf] [-o <file>]``: a session written out as the dashboard's downloads
write it (docs/EXPORT.md) — to standard output, or to a file that appears only once it is
complete."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from agentdash.dashboard.exports.session_export import (
    session_for_export,
    session_json_parts,
    session_otlp_parts,
    session_otlp_proto_parts,
)
from agentdash.spans.selectors import session_has_trace


class Command(BaseCommand):
    help = (
        "Export a session as JSON (the session, its state, runs, events, state history and "
        "spans) or its spans as OTLP/JSON (every trace, or one with --trace)."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("session_id", help="the session's id")
        parser.add_argument(
            "--trace", metavar="TRACE_ID", help="only this trace of the session (OTLP/JSON)"
        )
        parser.add_argument(
            "--format",
            choices=("session", "otlp"),
            help="session: the session document (the default); otlp: its spans as OTLP/JSON "
            "(the default with --trace)",
        )
        parser.add_argument(
            "--encoding",
            choices=("json", "protobuf"),
            help="OTLP's encoding: json (the default) or protobuf, the binary body OTLP/HTTP "
            "receivers such as Arize Phoenix take (implies --format otlp)",
        )
        parser.add_argument(
            "-o", "--output", metavar="FILE", help="write to FILE instead of standard output"
        )

    def handle(self, *args: Any, **options: Any) -> None:
        session_id: str = options["session_id"]
        trace_id: str | None = options["trace"]
        encoding: str | None = options["encoding"]
        implied = "otlp" if trace_id is not None or encoding is not None else "session"
        kind = options["format"] or implied
        if trace_id is not None and kind != "otlp":
            raise CommandError("--trace exports OTLP: use --format otlp or leave it out")
        if encoding is not None and kind != "otlp":
            raise CommandError("--encoding is OTLP's: use --format otlp or leave it out")
        session = session_for_export(session_id=session_id)
        if session is None:
            raise CommandError(f"there is no session {session_id!r}")
        if trace_id is not None and not session_has_trace(session_id=session.id, trace_id=trace_id):
            raise CommandError(f"session {session_id!r} has no span of trace {trace_id!r}")
        output = options["output"]
        if encoding == "protobuf":
            binary = session_otlp_proto_parts(session=session, trace_id=trace_id)
            if output in (None, "-"):
                _write_binary(self.stdout, binary)
                return
            size = _write_whole(Path(output), binary, ending=b"")
            self.stderr.write(f"wrote {size:,} bytes to {output}")
            return
        if kind == "otlp":
            parts = session_otlp_parts(session=session, trace_id=trace_id)
        else:
            parts = session_json_parts(session=session)
        if output in (None, "-"):
            for part in parts:
                self.stdout.write(part, ending="")
            self.stdout.write("")
            return
        size = _write_whole(Path(output), parts)
        self.stderr.write(f"wrote {size:,} bytes to {output}")


def _write_binary(stdout: Any, parts: Iterator[bytes]) -> None:
    """Bytes to standard output, unchanged (no line ending: it is not text). Raises
    ``CommandError`` when the command's output takes text only."""
    out = getattr(stdout, "buffer", None)  # OutputWrapper passes it on from the stream
    if out is None:
        raise CommandError("protobuf is binary and this output takes text: use -o FILE")
    for part in parts:
        out.write(part)
    out.flush()


def _write_whole(path: Path, parts: Iterator[str] | Iterator[bytes], ending: bytes = b"\n") -> int:
    """Write the parts (text as UTF-8), then ``ending``, to a temporary file beside
    ``path``, then move it into place: a failed export leaves no partial file. The number of
    bytes written."""
    directory = path.resolve().parent
    if not directory.is_dir():
        raise CommandError(f"cannot write {path}: {directory} is not a directory")
    handle, temporary = tempfile.mkstemp(dir=directory, prefix=f".{path.name}.", suffix=".part")
    size = 0
    try:
        with os.fdopen(handle, "wb") as out:
            for part in parts:
                data = part if isinstance(part, bytes) else part.encode("utf-8")
                out.write(data)
                size += len(data)
            out.write(ending)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
    return size + len(ending)
