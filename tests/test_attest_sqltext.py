"""The SQL tokenizer: formatting never counts, every token does, and ambiguity is refused."""

from __future__ import annotations

import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from okfx.attest.literals import decode_string, quote, read
from okfx.attest.sqltext import (
    BIGQUERY,
    SNOWFLAKE,
    STANDARD,
    SqlSyntaxError,
    canonical_text,
    strip_terminators,
    tokenize,
)


def keys(sql: str, dialect: object = STANDARD) -> list[tuple[str, str]]:
    return [(t.kind, t.key) for t in strip_terminators(tokenize(sql, dialect))]  # type: ignore[arg-type]


def test_whitespace_comments_keyword_case_and_final_semicolon_do_not_count() -> None:
    a = "SELECT SUM(amount) AS revenue FROM sales WHERE year = $year"
    b = "select\n  sum( amount )  as revenue -- the total\nfrom sales /* all */ where year=$YEAR;"
    assert keys(a) == keys(b)
    assert keys(a, BIGQUERY) == keys(b.replace("$YEAR", "@year"), BIGQUERY)


def test_strings_keep_case_and_spelling() -> None:
    assert keys("x = 'Delivered'") != keys("x = 'delivered'")
    assert keys("x = 'it''s'") == [("word", "x"), ("op", "="), ("string", "'it's")]


def test_bigquery_table_names_keep_case_but_keywords_do_not() -> None:
    assert keys("SELECT a FROM Trips", BIGQUERY) != keys("SELECT a FROM trips", BIGQUERY)
    assert keys("SELECT a FROM trips", BIGQUERY) == keys("select a from trips", BIGQUERY)
    # DuckDB and PostgreSQL fold unquoted identifiers, so there the case does not count.
    assert keys("SELECT a FROM Trips") == keys("select a from trips")


def test_identifiers_fold_by_ascii_letters_only() -> None:
    # AC QA: casefold made trip\u017f (a long s) and bi\u212ae_days (a Kelvin sign) the
    # sanctioned trips and bike_days, tables DuckDB reads as others.
    assert keys("SELECT a FROM trip\u017f") != keys("SELECT a FROM trips")
    assert keys("SELECT a FROM bi\u212ae_days") != keys("SELECT a FROM bike_days")
    assert keys("SELECT a FROM BIKE_Days") == keys("SELECT a FROM bike_days")


@pytest.mark.parametrize(
    ("dialect", "mark"), [(BIGQUERY, "#"), (SNOWFLAKE, "//")], ids=["bigquery", "snowflake"]
)
def test_a_dialects_own_line_comments_end_at_the_line_end(dialect: object, mark: str) -> None:
    # AC QA: read as operators, a newline moved into the comment hid a filter from the
    # engine and the tokens still matched.
    sanctioned = f"SELECT 1 FROM t WHERE y = 1 {mark} the year\n  AND s = 'ok' {mark} don't\n"
    moved = f"SELECT 1 FROM t WHERE y = 1 {mark} the year AND s = 'ok' {mark} don't\n"
    assert keys(sanctioned, dialect) == keys("SELECT 1 FROM t WHERE y = 1 AND s = 'ok'", dialect)
    assert keys(moved, dialect) != keys(sanctioned, dialect)
    assert ("op", mark[0]) in keys(f"SELECT 7 {mark} 2")  # standard SQL: no comment


def test_a_quote_inside_a_string_does_not_end_it() -> None:
    tokens = tokenize("SELECT 'a'' OR 1=1 --' AS x", STANDARD)
    assert [t.kind for t in tokens] == ["word", "string", "word", "word"]
    bq = tokenize(r"SELECT 'a\' OR 1=1 --' AS x", BIGQUERY)
    assert [t.kind for t in bq] == ["word", "string", "word", "word"]


def test_comment_markers_inside_strings_and_identifiers_are_text() -> None:
    assert [t.kind for t in tokenize("SELECT '--x', \"/*y*/\"", STANDARD)] == [
        "word",
        "string",
        "op",
        "quoted",
    ]


@pytest.mark.parametrize(
    ("sql", "why"),
    [
        ("SELECT 'open", "unterminated"),
        ("SELECT 1 /* open", "unterminated"),
        ("SELECT 1 /* a /* b */ DROP TABLE t */", "engines disagree"),
        ('SELECT "open', "unterminated"),
        ("SELECT $$open", "unterminated"),
    ],
)
def test_text_engines_could_read_two_ways_is_refused(sql: str, why: str) -> None:
    with pytest.raises(SqlSyntaxError, match=why):
        tokenize(sql, STANDARD)


def test_dollar_quoted_strings_and_dollar_parameters_are_told_apart() -> None:
    tokens = tokenize("SELECT $$ ; DROP TABLE t $$, $tag$x$tag$, $year", STANDARD)
    assert [t.kind for t in tokens] == ["word", "string", "op", "string", "op", "param"]


def test_parameter_syntax_is_one_token_where_the_prefix_means_nothing_else() -> None:
    assert keys("WHERE y = @Year", BIGQUERY) == keys("WHERE y = $year", BIGQUERY)
    assert keys("WHERE y = @@version", BIGQUERY)[-1] == ("word", "@@version")  # a variable
    # In PostgreSQL and DuckDB, @year is the absolute value of a column: not a parameter.
    assert keys("WHERE y = $YEAR")[-3:] == [("word", "y"), ("op", "="), ("param", "year")]
    assert keys("WHERE y = @year")[-2:] == [("op", "@"), ("word", "year")]


def test_canonical_text_is_one_line_with_at_parameters() -> None:
    text = canonical_text(tokenize("SELECT  X\nFROM t WHERE y = $y", STANDARD))
    assert text == "select x from t where y = @y"


# -- properties ---------------------------------------------------------------------------
SQL = (
    "WITH v AS (SELECT trip_date, COUNT(*) AS trips FROM trips WHERE trip_date "
    "BETWEEN $start AND $end AND NOT is_test AND kind = 'in''service' GROUP BY trip_date) "
    "SELECT ROUND(SUM(v.trips) / 7.5, 3) AS tpbd FROM v WHERE x <> -1"
)
BASE = tokenize(SQL, STANDARD)


def _reformat(pieces: list[str], seps: list[str], upper: list[bool]) -> str:
    out: list[str] = []
    for i, piece in enumerate(pieces):
        token = BASE[i]
        if token.kind == "word" and upper[i % len(upper)]:
            piece = piece.upper()
        out.append(piece)
        out.append(seps[i % len(seps)])
    return "".join(out)


SEPARATORS = st.sampled_from([" ", "\n", "\t", "  ", " -- note\n", " /* c */ ", "\n\n  "])


@settings(max_examples=200, deadline=None)
@given(
    seps=st.lists(SEPARATORS, min_size=1, max_size=20),
    upper=st.lists(st.booleans(), min_size=1, max_size=20),
    terminator=st.sampled_from(["", ";", " ;\n", ";;"]),
)
def test_formatting_only_changes_keep_the_tokens(
    seps: list[str], upper: list[bool], terminator: str
) -> None:
    text = _reformat([t.text for t in BASE], seps, upper) + terminator
    assert keys(text) == keys(SQL)


REPLACEMENTS = st.sampled_from(
    ["x", "1", "2.5", "'in_service'", "$other", "(", ")", ",", "=", "DROP", '"trips"', "NULL"]
)


@settings(max_examples=200, deadline=None)
@given(index=st.integers(min_value=0, max_value=len(BASE) - 1), new=REPLACEMENTS)
def test_changing_any_one_token_changes_the_tokens(index: int, new: str) -> None:
    original = BASE[index]
    changed = tokenize(new, STANDARD)[0]
    if (changed.kind, changed.key) == (original.kind, original.key):
        return  # the same token written again is no change
    pieces = [t.text for t in BASE]
    pieces[index] = new
    assert keys(" ".join(pieces)) != keys(SQL)


@settings(max_examples=200, deadline=None)
@given(
    index=st.integers(min_value=0, max_value=len(BASE)),
    extra=st.sampled_from(["; DROP TABLE trips", "OR 1=1", ",", "x", "'y'"]),
)
def test_adding_tokens_anywhere_changes_the_tokens(index: int, extra: str) -> None:
    pieces = [t.text for t in BASE]
    pieces.insert(index, extra)
    assert keys(" ".join(pieces)) != keys(SQL)


@settings(max_examples=300, deadline=None)
@given(value=st.text(max_size=60), bigquery=st.booleans())
def test_a_quoted_value_is_one_string_token_that_reads_back_as_itself(
    value: str, bigquery: bool
) -> None:
    dialect = BIGQUERY if bigquery else STANDARD
    tokens = tokenize(f"SELECT {quote(value, dialect)} AS v", dialect)
    assert [t.kind for t in tokens] == ["word", "string", "word", "word"]
    assert decode_string(tokens[1], dialect) == value
    literal = read(tokens, 1, dialect)
    assert literal is not None and literal[0].value == value


@pytest.mark.parametrize("dialect", [STANDARD, BIGQUERY], ids=lambda d: d.name)
@pytest.mark.parametrize(
    "piece", ["'a'' b' ", "x /* c */ ", "-- c\n", "$a$ x $a$ ", "`a` ", "'''", "/*", "(("]
)
def test_tokenizing_grows_linearly(dialect: object, piece: str) -> None:
    """A ratio of n against 4n (no timed assertion on one size): no quadratic input."""

    def cost(n: int) -> float:
        text = "SELECT " + piece * n
        start = time.process_time()
        try:
            tokenize(text, dialect)  # type: ignore[arg-type]
        except SqlSyntaxError:
            pass
        return time.process_time() - start

    small = min(cost(4_000) for _ in range(5))
    large = min(cost(16_000) for _ in range(5))
    assert large < small * 12


@settings(max_examples=400, deadline=None)
@given(text=st.text(alphabet=st.sampled_from(list("ab1 .'\"`$@-/*;\n\\eE(")), max_size=60))
def test_any_text_tokenizes_or_is_refused_and_reads_the_same_twice(text: str) -> None:
    for dialect in (STANDARD, BIGQUERY):
        try:
            tokens = tokenize(text, dialect)
        except SqlSyntaxError as exc:
            assert 0 <= exc.offset <= len(text)
            continue
        # Tokens lie in order inside the text, and their own text tokenizes back to them.
        starts = [t.start for t in tokens]
        assert starts == sorted(starts) and all(text.startswith(t.text, t.start) for t in tokens)
        again = tokenize(" ".join(t.text for t in tokens), dialect)
        assert [(t.kind, t.key) for t in again] == [(t.kind, t.key) for t in tokens]
