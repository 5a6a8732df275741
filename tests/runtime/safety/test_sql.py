"""Table extraction from simple SQL, and the statement shapes it refuses."""

from __future__ import annotations

import pytest

from runtime.safety import ParsedSql, UnsupportedSqlError, parse_sql


def tables(sql: str) -> tuple[str, ...]:
    return parse_sql(sql).tables


@pytest.mark.parametrize(
    ("sql", "expected"),
    [
        ("SELECT * FROM mytable1", ("mytable1",)),
        ("select * from MyTable1", ("mytable1",)),  # case-insensitive
        ("SELECT * FROM a JOIN b ON a.id = b.id LEFT OUTER JOIN c USING (id)", ("a", "b", "c")),
        ("SELECT * FROM a, b AS bb, c cc WHERE a.x = bb.x", ("a", "b", "c")),
        ("SELECT * FROM a JOIN b ON a.x = b.x, c", ("a", "b", "c")),  # comma after a join
        ("SELECT * FROM (a CROSS JOIN b)", ("a", "b")),  # parenthesised join
        (
            "SELECT * FROM sales.orders o JOIN sales.items i ON o.id = i.oid",
            ("sales.orders", "sales.items"),
        ),
        ('SELECT * FROM "Sales"."Order Items"', ("sales.order items",)),
        ("SELECT * FROM `weird``name`", ("weird`name",)),
        ("SELECT * FROM db.schema.t", ("db.schema.t",)),
    ],
)
def test_tables_of_from_and_join_clauses(sql: str, expected: tuple[str, ...]) -> None:
    assert tables(sql) == expected


def test_subqueries_in_from_where_and_select_are_read() -> None:
    sql = (
        "SELECT (SELECT max(x) FROM s1) AS m FROM (SELECT * FROM inner_t) AS sub, outer_t "
        "WHERE sub.id IN (SELECT id FROM s2) AND EXISTS (SELECT 1 FROM s3)"
    )
    assert set(tables(sql)) == {"s1", "inner_t", "outer_t", "s2", "s3"}


def test_comments_and_string_literals_neither_hide_nor_invent_tables() -> None:
    sql = """
        -- FROM fake_in_comment
        SELECT 'FROM fake_in_string', "col" /* JOIN fake_in_block */
        FROM real_t WHERE name = 'it''s ; FROM nope'
    """
    assert tables(sql) == ("real_t",)


def test_functions_with_from_in_their_syntax_name_no_table() -> None:
    sql = (
        "SELECT EXTRACT(YEAR FROM created), SUBSTRING(name FROM 2 FOR 3), TRIM(BOTH ' ' FROM x) "
        "FROM t WHERE a IS DISTINCT FROM b"
    )
    assert tables(sql) == ("t",)
    assert tables("SELECT EXTRACT(YEAR FROM (SELECT d FROM hidden)) FROM t") == ("hidden", "t")


def test_cte_names_are_not_tables_but_their_bodies_are_read() -> None:
    sql = (
        "WITH recent AS (SELECT * FROM orders WHERE d > now()), "
        "top(n) AS (SELECT count(*) FROM recent) "
        "SELECT * FROM recent JOIN top ON true"
    )
    assert tables(sql) == ("orders",)
    recursive = "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r) SELECT * FROM r"
    assert tables(recursive) == ()


def test_a_cte_name_does_not_cover_the_real_table_outside_its_scope() -> None:
    # Inside the first CTE's body, "secret" is still the real table.
    sql = "WITH a AS (SELECT * FROM secret), secret AS (SELECT 1) SELECT * FROM a"
    assert tables(sql) == ("secret",)
    # A DELETE target is always a real table, whatever CTE shares its name.
    assert tables("WITH secret AS (SELECT 1) DELETE FROM secret") == ("secret",)
    # A WITH nested in a subquery is not honoured: its name counts as a table (refuses more).
    assert tables("SELECT * FROM (WITH x AS (SELECT 1) SELECT * FROM x) s, x") == ("x",)


def test_writing_statements() -> None:
    assert tables("INSERT INTO audit (a, b) SELECT x, y FROM src") == ("audit", "src")
    assert tables("UPDATE t SET a = 1, b = 2 FROM u WHERE t.id = u.id") == ("t", "u")
    assert tables("UPDATE t1, t2 SET t1.a = t2.a") == ("t1", "t2")
    assert tables("DELETE FROM t USING a, b WHERE t.id = a.id") == ("t", "a", "b")
    upsert = "INSERT INTO t (a) VALUES (1) ON CONFLICT (a) DO UPDATE SET a = 2"
    assert tables(upsert) == ("t",)
    assert parse_sql("delete from t").statement == "DELETE"


def test_one_statement_only() -> None:
    assert tables("SELECT * FROM t;") == ("t",)  # a trailing semicolon is fine
    assert tables("SELECT ';' FROM t") == ("t",)  # a semicolon in a string is no separator
    for sql in [
        "SELECT * FROM t; DROP TABLE users",
        "SELECT * FROM t -- harmless comment\n; DROP TABLE users",
        "SELECT * FROM t /* end */ ; /* next */ DELETE FROM users",
        "SELECT 1;;",
    ]:
        with pytest.raises(UnsupportedSqlError, match="only one statement"):
            parse_sql(sql)


@pytest.mark.parametrize(
    ("sql", "why"),
    [
        ("", "empty"),
        ("  -- only a comment\n", "empty"),
        ("SELECT * FROM", "should follow FROM"),
        ("SELECT * FROM [secret table]", "could not read the table name after FROM"),
        ("SELECT * FROM t WHERE a = 'open", "not closed"),
        ("SELECT 1 /* open", "not closed"),
        # Lexed differently by different databases: refused rather than guessed.
        ("SELECT 'a\\'' FROM secret -- '", "backslash"),
        ("SELECT $$'$$ FROM secret -- '", "'\\$'"),
        ("SELECT * FROM ok # '\nFROM secret -- '", "'#'"),
        ("SELECT 1 --'\nFROM secret -- '", "followed by a space"),
        ("SELECT 1 /*! FROM secret */", "executable"),
    ],
)
def test_unreadable_sql_is_refused(sql: str, why: str) -> None:
    with pytest.raises(UnsupportedSqlError, match=why):
        parse_sql(sql)


def test_statement_keywords_and_row_limit() -> None:
    parsed = parse_sql("with x as (select 1) select * from t limit 10 offset 5")
    assert isinstance(parsed, ParsedSql)
    assert parsed.statement == "WITH"
    assert {"WITH", "SELECT", "FROM", "LIMIT"} <= parsed.keywords
    assert parsed.row_limit == 10
    assert parse_sql("SELECT * FROM t LIMIT 5, 20").row_limit == 20  # MySQL: offset, count
    assert parse_sql("SELECT * FROM t FETCH FIRST 3 ROWS ONLY").row_limit == 3
    assert parse_sql("SELECT * FROM (SELECT * FROM t LIMIT 5) s").row_limit is None
    assert parse_sql("SELECT * FROM t LIMIT 5 UNION SELECT * FROM u").row_limit is None
    assert parse_sql("SELECT * FROM t LIMIT ALL").row_limit is None
    assert parse_sql("(SELECT 1)").statement == ""
