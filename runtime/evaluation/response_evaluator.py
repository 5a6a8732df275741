"""Final response match, ADK's ``response_match_score``: the ROUGE-1 F-measure of the
agent's final response against the expected one, written here without the ``rouge-score``
package, and an exact match beside it.

Tokens are as ``rouge-score`` makes them — lowercased runs of letters and digits, everything
else a separator — with two differences: letters outside ASCII count as letters (``rouge-
score`` drops them, so ADK scores most non-Latin text 0), and no Porter stemming (ADK stems
Latin-script text: "turned" and "turn" match there, not here, so a score here can be a
little lower than ``adk eval``'s). Two empty responses match (1.0), where ``rouge-score``
says 0.0: a turn that expected no text and got none is no regression.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass

from google.genai import types

from runtime.evaluation.eval_case import Invocation
from runtime.evaluation.evaluator import Evaluator

_TOKEN = re.compile(r"[^\W_]+")


@dataclass(frozen=True)
class RougeScore:
    precision: float
    recall: float
    fmeasure: float


def tokens(text: str) -> list[str]:
    """The words ROUGE counts: lowercased runs of letters and digits."""
    return _TOKEN.findall(text.lower())


def rouge_1(candidate: str, reference: str) -> RougeScore:
    """ROUGE-1 of ``candidate`` against ``reference``: shared words (each counted as often
    as it occurs in both) over the candidate's words (precision) and the reference's
    (recall), and their harmonic mean."""
    said, wanted = Counter(tokens(candidate)), Counter(tokens(reference))
    if not said and not wanted:
        return RougeScore(1.0, 1.0, 1.0)
    overlap = sum((said & wanted).values())
    precision = overlap / max(sum(said.values()), 1)
    recall = overlap / max(sum(wanted.values()), 1)
    total = precision + recall
    return RougeScore(precision, recall, 2 * precision * recall / total if total else 0.0)


def content_text(content: types.Content | None) -> str:
    """The text parts joined by newlines (thoughts left out), ``""`` for none — as ADK reads
    a response."""
    if content is None or not content.parts:
        return ""
    return "\n".join(p.text for p in content.parts if p.text and not p.thought)


def exact_match(actual: Invocation, expected: Invocation) -> bool:
    """The final responses' texts are equal, leading and trailing whitespace aside."""
    return (
        content_text(actual.final_response).strip() == content_text(expected.final_response).strip()
    )


class ResponseEvaluator(Evaluator):
    """ROUGE-1 F-measure of each final response against the expected one."""

    def score_invocation(self, actual: Invocation, expected: Invocation) -> float:
        candidate = content_text(actual.final_response)
        return rouge_1(candidate, content_text(expected.final_response)).fmeasure
