"""The hostile corpus (``xss_corpus.json``), loaded: what the vectors are, what they try.

Every vector tries to run the trap (:data:`TRAP`, a global function the browser tests
define and count), to open a dialog (``alert``/``confirm``/``prompt``) or to make the page
fetch from :data:`EVIL_HOST`. Oversized vectors are stored as a recipe (``build``: before +
repeat × times + after) and built here.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from functools import cache
from pathlib import Path

CORPUS = Path(__file__).with_name("xss_corpus.json")
TRAP = "xss"
EVIL_HOST = "evil.example"
KINDS = (
    "tag",
    "url",
    "svg_mathml",
    "mutation",
    "css",
    "markdown",
    "template",
    "unicode",
    "oversized",
)


@dataclass(frozen=True)
class Vector:
    id: str
    kind: str
    text: str

    @property
    def big(self) -> bool:
        """Longer than a chat message or a websocket frame may be (64 KB)."""
        return len(self.text) > 16_000

    @property
    def typeable(self) -> bool:
        """A person could type it: no NUL, no other C0 control but tab and newline, no lone
        surrogate (a browser's form field and JSON.stringify cannot carry those faithfully),
        and not :attr:`big`."""
        return not self.big and not any(
            (ord(c) < 32 and c not in "\t\n") or 0xD800 <= ord(c) <= 0xDFFF for c in self.text
        )

    def short(self, limit: int = 120) -> str:
        """The text for a failure message: cut, and with invisible characters escaped."""
        shown = self.text if len(self.text) <= limit else self.text[:limit] + "…"
        return shown.encode("unicode_escape", errors="backslashreplace").decode("ascii")


def _built(raw: dict[str, object]) -> str:
    if "text" in raw:
        return str(raw["text"])
    recipe = raw["build"]
    assert isinstance(recipe, dict), raw
    return (
        str(recipe["before"]) + str(recipe["repeat"]) * int(recipe["times"]) + str(recipe["after"])
    )


@cache
def vectors() -> tuple[Vector, ...]:
    """Every vector of the corpus, in file order."""
    data = json.loads(CORPUS.read_text(encoding="utf-8"))
    return tuple(
        Vector(id=str(raw["id"]), kind=str(raw["kind"]), text=_built(raw))
        for raw in data["vectors"]
    )


def by_id(vector_id: str) -> Vector:
    return next(v for v in vectors() if v.id == vector_id)


def batches(items: Iterable[Vector], size: int) -> Iterator[tuple[Vector, ...]]:
    """``items`` in groups of at most ``size``, in order."""
    group: list[Vector] = []
    for item in items:
        group.append(item)
        if len(group) == size:
            yield tuple(group)
            group = []
    if group:
        yield tuple(group)
