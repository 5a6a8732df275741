"""The shapes of code execution, as ADK names them: what goes in, what comes out, and how code
travels in a model's content (a fenced block in its text, or an ``executable_code`` part)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from google.genai import types

__all__ = ["CodeExecutionInput", "CodeExecutionResult", "CodeExecutionUtils", "File"]


@dataclass(frozen=True)
class File:
    """A file given to or made by the code: its name, content and type."""

    name: str
    content: str | bytes
    mime_type: str = "text/plain"


@dataclass
class CodeExecutionInput:
    code: str
    input_files: list[File] = field(default_factory=list)
    execution_id: str | None = None


@dataclass
class CodeExecutionResult:
    """What the code printed. ``exit_code``, ``stopped_by`` (the limit the sandbox stopped
    the run at, from its own evidence; "" for none) and ``usage`` (what the run used, as
    measured) are this runtime's additions; ADK's fields come first."""

    stdout: str = ""
    stderr: str = ""
    output_files: list[File] = field(default_factory=list)
    exit_code: int = 0
    stopped_by: str = ""
    usage: dict[str, Any] = field(default_factory=dict)


class CodeExecutionUtils:
    """Finding code in a model's answer and writing results back, as ADK's utilities do."""

    @staticmethod
    def extract_code_and_truncate_content(
        content: types.Content | None, code_block_delimiters: list[tuple[str, str]]
    ) -> str | None:
        """The first code to run in ``content``, which is cut after it (in place): an
        ``executable_code`` part not yet followed by its result, else the first fenced
        block of its text (the text before the block is kept as a part of its own)."""
        if content is None or not content.parts:
            return None
        parts = content.parts
        for i, part in enumerate(parts):
            if part.executable_code is not None and (
                i == len(parts) - 1 or parts[i + 1].code_execution_result is None
            ):
                content.parts = parts[: i + 1]
                return part.executable_code.code
        texts = [p.text for p in parts if p.text]
        if not texts or not code_block_delimiters:
            return None
        text = "\n".join(texts)
        starts = "|".join(re.escape(start) for start, _ in code_block_delimiters)
        ends = "|".join(re.escape(end) for _, end in code_block_delimiters)
        found = re.search(rf"(?P<prefix>.*?)(?:{starts})(?P<code>.*?)(?:{ends})", text, re.DOTALL)
        if found is None or not found.group("code"):
            return None
        code = found.group("code")
        kept: list[types.Part] = []
        if found.group("prefix"):
            kept.append(types.Part(text=found.group("prefix")))
        kept.append(CodeExecutionUtils.build_executable_code_part(code))
        content.parts = kept
        return code

    @staticmethod
    def build_executable_code_part(code: str) -> types.Part:
        return types.Part.from_executable_code(code=code, language=types.Language.PYTHON)

    @staticmethod
    def build_code_execution_result_part(result: CodeExecutionResult) -> types.Part:
        """``OUTCOME_FAILED`` with the error output when there is any, else ``OUTCOME_OK``
        with what was printed (as ADK words it)."""
        if result.stderr or result.stopped_by or result.exit_code:
            said = result.stderr or f"the code exited with status {result.exit_code}"
            if result.stopped_by:
                said = f"{said}\n(stopped by the sandbox: {result.stopped_by})".lstrip()
            return types.Part.from_code_execution_result(
                outcome=types.Outcome.OUTCOME_FAILED, output=said
            )
        return types.Part.from_code_execution_result(
            outcome=types.Outcome.OUTCOME_OK, output=f"Code execution result:\n{result.stdout}\n"
        )

    @staticmethod
    def convert_code_execution_parts(
        content: types.Content,
        code_block_delimiter: tuple[str, str],
        execution_result_delimiters: tuple[str, str],
    ) -> None:
        """For the model's next request (in place): a trailing ``executable_code`` part as a
        fenced block of text, a lone ``code_execution_result`` as the user's text."""
        if not content.parts:
            return
        last = content.parts[-1]
        if last.executable_code is not None:
            start, end = code_block_delimiter
            content.parts[-1] = types.Part(text=f"{start}{last.executable_code.code}{end}")
        elif len(content.parts) == 1 and last.code_execution_result is not None:
            output = last.code_execution_result.output
            start, end = execution_result_delimiters
            content.parts[-1] = types.Part(text="" if output is None else f"{start}{output}{end}")
            content.role = "user"
