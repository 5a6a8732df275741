"""Tables as a tool documents them: ``customers(id INTEGER, name TEXT, city TEXT)``."""

from __future__ import annotations

import re
from dataclasses import dataclass

from runtime.models._offline_text import stem

_TABLE = re.compile(r"\b([A-Za-z_]\w{0,62})\s*\(([^()]{1,2000})\)")
_COLUMN = re.compile(r"\s*([A-Za-z_]\w{0,62})(?:\s+([A-Za-z]+))?\s*")
_NUMERIC = frozenset({"INTEGER", "INT", "REAL", "NUMERIC", "FLOAT", "DOUBLE", "DECIMAL"})
_DATES = frozenset({"DATE", "DATETIME", "TIMESTAMP", "TIME"})
_PLACES = frozenset({"city", "country", "town", "region", "location", "place", "state"})
_NAMES = frozenset({"name", "title", "full_name", "username"})


@dataclass(frozen=True)
class Column:
    name: str
    type: str = ""  # as documented, upper case; "" when not given

    @property
    def key(self) -> bool:
        """``id`` or ``<something>_id``: a key, never a quantity to total or rank by."""
        return self.name.lower() == "id" or self.name.lower().endswith("_id")

    @property
    def numeric(self) -> bool:
        return self.type in _NUMERIC and not self.key

    @property
    def date(self) -> bool:
        low = self.name.lower()
        return self.type in _DATES or low.endswith(("_on", "_at", "date"))

    @property
    def place(self) -> bool:
        return self.name.lower() in _PLACES

    @property
    def label(self) -> bool:
        return self.name.lower() in _NAMES

    def named_by(self, word: str) -> bool:
        """Whether ``word`` (lower case) names this column: ``city``/``cities`` for ``city``,
        ``customer`` for ``customer_id``, ``placed`` for ``placed_on``."""
        parts = [p for p in self.name.lower().split("_") if p not in ("id", "on", "at")]
        return bool(parts) and stem(word) in {stem(p) for p in parts}


@dataclass(frozen=True)
class Table:
    name: str
    columns: tuple[Column, ...]

    def named_by(self, word: str) -> bool:
        """``customers`` is named by ``customer``, ``customers`` and ``customer's``."""
        return stem(word) == stem(self.name.lower()) or word == self.name.lower()

    def column(self, word: str) -> Column | None:
        """The column ``word`` names: by its exact name, else by :meth:`Column.named_by`."""
        exact = next((c for c in self.columns if c.name.lower() == word), None)
        return exact or next((c for c in self.columns if c.named_by(word)), None)

    def first(self, kind: str) -> Column | None:
        """The first column that is ``numeric``, ``date``, ``place`` or ``label``."""
        return next((c for c in self.columns if getattr(c, kind)), None)

    def describe(self) -> str:
        return f"{self.name}({', '.join(c.name for c in self.columns)})"


def schema_from(text: str) -> list[Table]:
    """Every ``name(column [TYPE], column [TYPE], ...)`` in ``text`` with at least two
    columns; anything else in parentheses (``COUNT(*)``, prose) is not a table."""
    tables: list[Table] = []
    for m in _TABLE.finditer(text):
        columns = []
        for raw in m.group(2).split(","):
            col = _COLUMN.fullmatch(raw)
            if col is None:
                break
            columns.append(Column(col.group(1), (col.group(2) or "").upper()))
        else:
            if len(columns) >= 2 and all(t.name != m.group(1) for t in tables):
                tables.append(Table(m.group(1), tuple(columns)))
    return tables
