"""Words for the offline model: stems, content words, declared parameters and filled arguments.

Everything here is plain string work, deterministic, and linear in the length of the text.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from google.genai import types

_STOP_WORDS = (
    "the a an is of what to for in on and or me my please can you i it be with about do does "
    "tell show give how where when who which why are was this that at by from we our us have "
    "has had there their your any some all not cannot"
)
STOP = frozenset(_STOP_WORDS.split())
# Words that say nothing about which agent fits: every desk "handles questions".
_VAGUE_STEMS = (
    "handl question problem issu help request troubl thing agent customer support general "
    "other need want"
)
VAGUE = frozenset(_VAGUE_STEMS.split())
# Parameters that take the user's own words, whole: a search, a problem, a question.
FREE_TEXT = frozenset({"problem", "question", "text", "message", "description", "issue", "topic"})
NUMBER = r"(?<!\w)-?\d+(?:\.\d+)?"
# A parameter naming a number or code, and what one looks like in a message: 1002, INV-1002.
_IDENTIFIER = re.compile(r"(^|_)(number|no|id|code|ref|reference)$|^id$", re.IGNORECASE)
_CODE = re.compile(r"(?<![\w-])(?:[A-Za-z]{1,10}-?)?\d[\w-]*")
_SUFFIXES = (
    ("ies", "y"),
    ("ments", ""),
    ("ment", ""),
    ("ings", ""),
    ("ing", ""),
    ("es", ""),
    ("ed", ""),
    ("s", ""),
)


def words(text: str) -> list[str]:
    return re.findall(r"[a-z0-9]+", text.lower())


def stem(word: str) -> str:
    """A crude stem, the same for "charge", "charges", "charged" and "charging"."""
    for suffix, replacement in _SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) + len(replacement) >= 3:
            word = word[: -len(suffix)] + replacement
            break
    return word[:-1] if len(word) > 3 and word.endswith("e") else word


def keys(text: str) -> set[str]:
    """Stemmed content words: no stop words, no tokens shorter than three characters."""
    return {stem(w) for w in words(text) if w not in STOP and len(w) > 2}


def name_keys(name: str) -> set[str]:
    """The content words of an identifier: ``get_capital_city``, ``lookupPlanet``."""
    return keys(re.sub(r"([a-z0-9])([A-Z])", r"\1 \2", name).replace("_", " "))


@dataclass
class Param:
    name: str
    type: str
    enum: list[str]
    description: str


def params(decl: types.FunctionDeclaration) -> list[Param]:
    """The declared parameters, from a ``types.Schema`` or a JSON schema dict."""
    schema: Any = decl.parameters_json_schema
    if decl.parameters is not None:
        schema = decl.parameters.model_dump(mode="json", exclude_none=True)
    if not isinstance(schema, dict):
        return []
    out: list[Param] = []
    for name, raw in (schema.get("properties") or {}).items():
        js: dict[str, Any] = raw if isinstance(raw, dict) else {}
        kind = js.get("type", "")
        if isinstance(kind, list):  # JSON schema ["string", "null"]
            kind = next((k for k in kind if k != "null"), "")
        enum = [str(e) for e in js.get("enum") or []]
        desc = str(js.get("description") or "")
        out.append(Param(str(name), str(kind).lower(), enum, desc))
    return out


def score(message: set[str], name: str, description: str, *, vague: bool = True) -> int:
    """How well ``message`` (its :func:`keys`) fits a tool or agent: a word of its name counts
    three, a word of its description one (``vague=False``: words of :data:`VAGUE` do not)."""
    named, described = name_keys(name), keys(description)
    if not vague:
        named, described = named - VAGUE, described - VAGUE
    return 3 * len(message & named) + len(message & described)


def guess(text: str, exclude: set[str]) -> str:
    """The message's own words minus stop words and words describing the tool."""
    kept = [
        w
        for w in re.findall(r"[^\W_]+", text)
        if w.lower() not in STOP and (len(w) > 1 or w.isdigit()) and stem(w.lower()) not in exclude
    ]
    return " ".join(kept)


def named_value(text: str, name: str) -> str | None:
    """The value following ``name`` in the message: ``city Paris``, ``city: "New York"``."""
    label = re.escape(name).replace("_", "[_ ]")
    m = re.search(rf"\b{label}\b\s*[:=]?\s*(?:\"([^\"]*)\"|(.*))", text, flags=re.IGNORECASE)
    if m is None:
        return None
    if m.group(1) is not None:
        return m.group(1)
    rest = [w for w in re.findall(r"[^\W_]+", m.group(2)) if w.lower() not in STOP]
    return rest[0] if rest else None


def _option(text: str, decl: types.FunctionDeclaration, param: Param) -> str | None:
    """The first word of ``text`` that the description lists as a choice in parentheses:
    ``(email, vpn, website or api)``."""
    described = f"{decl.description or ''} {param.description}"
    options = {
        o.strip().lower()
        for listed in re.findall(r"\(([^()]*,[^()]*)\)", described)
        for o in re.split(r",|\bor\b", listed)
    }
    return next((w for w in re.findall(r"[^\W_]+", text) if w.lower() in options), None)


def fill_args(decl: types.FunctionDeclaration, text: str) -> dict[str, Any]:
    """Arguments for ``decl`` from the message: enum values it names, the first code with
    digits for a string parameter named ``…_number``/``…_id``/``code`` (``INV-1002``), a
    choice the description lists in parentheses, ``name value`` pairs, numbers in order, the
    whole message for a free-text parameter (:data:`FREE_TEXT`), and otherwise its words that
    do not describe the tool."""
    declared = params(decl)
    naming = name_keys(decl.name or "") | {k for p in declared for k in name_keys(p.name)}
    # Words of the description are dropped too, unless that leaves nothing: a docstring's
    # example ("e.g. France") must not swallow the very value the user gave.
    guessed = guess(text, naming | keys(decl.description or "")) or guess(text, naming)
    numbers = re.findall(NUMBER, text)
    args: dict[str, Any] = {}
    for p in declared:
        if p.type == "string" and "python" in (p.description or "").lower():
            args[p.name] = python_for(text)  # a code-execution tool (run_python)
        elif p.type == "string" and p.enum:
            hit = next((e for e in p.enum if re.search(rf"\b{re.escape(e)}\b", text, re.I)), None)
            if hit is not None:
                args[p.name] = hit
        elif p.type == "string" and p.name.lower() in FREE_TEXT:
            if text.strip():
                args[p.name] = " ".join(text.split())
        elif p.type == "string" and _IDENTIFIER.search(p.name) and _CODE.search(text):
            args[p.name] = _CODE.findall(text)[0]  # "INV-1002" for an invoice_number
        elif p.type == "string" and (option := _option(text, decl, p)) is not None:
            args[p.name] = option  # "vpn" for a service described as (email, vpn, website)
        elif p.type == "string":
            value = named_value(text, p.name) or guessed
            if value:
                args[p.name] = value
        elif p.type in ("integer", "number") and numbers:
            raw = named_value(text, p.name)
            raw = raw if raw and re.fullmatch(NUMBER, raw) else numbers.pop(0)
            args[p.name] = int(float(raw)) if p.type == "integer" else float(raw)
        elif p.type == "boolean" and name_keys(p.name) & keys(text):
            args[p.name] = True
    return args


def python_for(text: str) -> str:
    """The offline model's program for a code-execution tool: the statistics of the numbers
    the message gives (the model cannot write other code)."""
    numbers = [float(n) for n in re.findall(NUMBER, text)]
    if not numbers:
        return 'print("No numbers were given.")'
    lines = [
        "import statistics",
        f"numbers = {numbers!r}",
        'print(f"count: {len(numbers)}")',
        'print(f"sum: {sum(numbers):g}")',
        'print(f"mean: {statistics.fmean(numbers):g}")',
        'print(f"median: {statistics.median(numbers):g}")',
        'print(f"min: {min(numbers):g}, max: {max(numbers):g}")',
        "if len(numbers) > 1:",
        '    print(f"standard deviation: {statistics.stdev(numbers):g}")',
    ]
    return "\n".join(lines)
