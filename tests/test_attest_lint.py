"""``okfx validate`` says when an Attested Computation cannot be bound for any value, and
when a declared parameter is never used (``okfx.attest.lint``)."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from conftest import MakeBundle
from okfx import Bundle, validate
from okfx.attest import bind
from okfx.attest.lint import computation_problems
from okfx.bundle.validate import validate as validate_spec
from okfx.cli.commands import cli as main
from okfx.errors import OKFError


def computation(parameters: str, sql: str, runtime: str = "duckdb") -> str:
    return (
        f"---\ntype: Attested Computation\nruntime: {runtime}\nparameters:\n{parameters}---\n\n"
        f"# Computation\n\n```sql\n{sql}\n```\n"
    )


GOOD = computation("  - {name: year, type: integer, required: true}\n", "SELECT $year")
FILES: dict[str, str | bytes] = {
    "good.md": GOOD,
    "undeclared.md": computation(
        "  - {name: year, type: integer}\n", "SELECT 1\nWHERE y = $year\n  AND r = $region"
    ),
    "unknown-type.md": computation("  - {name: year, type: int32}\n", "SELECT $year"),
    "bad-default.md": computation(
        "  - name: region\n    type: string\n    enum: [north, south]\n    default: west\n",
        "SELECT $region",
    ),
    "bad-enum.md": computation(
        "  - {name: n, type: integer, enum: [1, two]}\n", "SELECT $n", runtime="postgres"
    ),
    "twice.md": computation(
        "  - {name: year, type: integer}\n  - {name: YEAR, type: integer}\n", "SELECT $year"
    ),
    "unreadable.md": computation("  - {name: n, type: integer}\n", "SELECT 'open $n"),
    "unused.md": computation(
        "  - {name: year, type: integer}\n", "SELECT 1 WHERE y = {{year}}", runtime="redshift"
    ),
    "python.md": computation("  - {name: n, type: whatever}\n", "x = $m", runtime="python"),
    "empty.md": "---\ntype: Attested Computation\nruntime: duckdb\n---\n\nNo block.\n",
}


@pytest.fixture(scope="module")
def bundle(tmp_path_factory: pytest.TempPathFactory) -> Bundle:
    from conftest import write_tree

    return Bundle.load(write_tree(tmp_path_factory.mktemp("lint") / "kb", FILES))


def test_each_reason_a_computation_cannot_bind_is_named(bundle: Bundle) -> None:
    found = {(p.path, p.code, p.message) for p in computation_problems(bundle)}
    expected = {
        (
            "/undeclared.md",
            "unbindable_computation",
            "its '# Computation' block uses the placeholder 'region' at its line 3, which the "
            "parameters do not declare (declared: year) (line 13)",
        ),
        (
            "/unknown-type.md",
            "unbindable_computation",
            "parameter 'year' declares type 'int32', which okfx cannot check (known: boolean, "
            "date, integer, number, string, timestamp); the computation cannot be bound until "
            "its contract names one (line 5)",
        ),
        (
            "/bad-default.md",
            "unbindable_computation",
            "parameter 'region' declares default 'west', but 'west' is not one of the declared "
            "values ('north', 'south'): the computation's contract must be fixed before it is "
            "bound (line 8)",
        ),
        (
            "/bad-enum.md",
            "unbindable_computation",
            "parameter 'n' declares the enum value 'two', which is not an integer (a JSON "
            "number without a fraction, within 64 bits): the computation's contract must be "
            "fixed before it is bound (line 5)",
        ),
        (
            "/twice.md",
            "unbindable_computation",
            "parameter 'year' is declared 2 times (names are compared without case)",
        ),
        (
            "/unreadable.md",
            "unbindable_computation",
            "its '# Computation' block cannot be read as SQL at its line 1: unterminated "
            "'...' starting here (line 11)",
        ),
        (
            "/unused.md",
            "unused_parameter",
            "parameter 'year' is declared but its '# Computation' block never uses it "
            "(written $year in redshift SQL) (line 5)",
        ),
    }
    assert found == expected


def test_what_the_check_reports_is_what_binding_refuses(bundle: Bundle) -> None:
    flagged = {p.path for p in computation_problems(bundle) if p.code == "unbindable_computation"}
    for concept in bundle:
        if concept.computation is None or concept.computation.runtime == "python":
            continue
        values = {p.name: 1 for p in concept.computation.parameters if p.type == "integer"}
        try:
            bind(bundle, concept, values)
        except OKFError:
            refused = True
        else:
            refused = False
        assert refused == (concept.path in flagged or concept.path == "/empty.md"), concept.path


def test_validate_reports_them_as_warnings_the_spec_check_does_not(bundle: Bundle) -> None:
    report = validate(bundle)
    assert report.conformant
    assert report.by_code["unbindable_computation"] == 6
    assert report.by_code["unused_parameter"] == 1
    assert report.by_code["missing_computation"] == 1  # the load's, not said twice
    spec_only = validate_spec(bundle)
    assert "unbindable_computation" not in spec_only.by_code


def test_the_cli_reports_them(make_bundle: MakeBundle) -> None:
    root = make_bundle({"good.md": GOOD, "unused.md": FILES["unused.md"]})
    result = CliRunner().invoke(main, ["validate", str(root), "--json"])
    data = json.loads(result.output)
    assert result.exit_code == 0 and data["conformant"]
    assert [w["code"] for w in data["warnings"]] == ["unused_parameter"]
    strict = CliRunner().invoke(main, ["validate", str(root), "--strict"])
    assert strict.exit_code != 0


def test_a_contract_written_off_the_spec_is_read_on_the_safe_side(make_bundle: MakeBundle) -> None:
    """``required: "yes"`` bound NULL silently (the parameter read as optional, the figure
    attested wrong); a runtime that is a list read as missing; parameters written as a
    mapping of names had "no name" (Attested Computation QA)."""
    root = make_bundle(
        {
            "yes.md": computation('  - {name: y, type: integer, required: "yes"}\n', "SELECT $y"),
            "list.md": computation("  - {name: y, type: integer}\n", "SELECT $y", "[a, b]"),
            "map.md": "---\ntype: Attested Computation\nruntime: duckdb\nparameters:\n"
            "  year: integer\n---\n\n# Computation\n\n```sql\nSELECT 1\n```\n",
        }
    )
    bundle = Bundle.load(root)
    with pytest.raises(OKFError, match="'y' is required"):
        bind(bundle, "/yes.md", {})
    messages = {w.path: w.message for w in bundle.warnings if w.code == "invalid_field"}
    assert "required is a string 'yes', not true or false; read as true" in messages["/yes.md"]
    assert "runtime is a list" in messages["/list.md"]
    assert "parameters is a mapping of names; write a list" in messages["/map.md"]


def test_validate_and_binding_read_a_computation_file_alike(make_bundle: MakeBundle) -> None:
    """A bare ``computation: sql/x.sql`` beside a file at the root: validate read it from
    the root, binding from the concept's folder and refused; a file binding cannot read
    (not UTF-8) passed validate clean (Attested Computation QA)."""
    contract = "---\ntype: Attested Computation\nruntime: duckdb\ncomputation: {}\n---\n"
    root = make_bundle(
        {
            "c/root.md": contract.format("sql/x.sql"),
            "c/beside.md": contract.format("./sql/y.sql"),
            "c/binary.md": contract.format("sql/bin.sql"),
            "sql/x.sql": "SELECT 1",
            "c/sql/y.sql": "SELECT 2",
            "c/sql/bin.sql": b"SELECT '\xff\xfe'",
        }
    )
    bundle = Bundle.load(root)
    assert bind(bundle, "/c/root.md", {}).sql == "SELECT 1"
    assert bind(bundle, "/c/beside.md", {}).sql == "SELECT 2"
    report = validate(bundle)
    assert not [w for w in report.warnings if w.code == "broken_link"]
    (unbindable,) = [w for w in report.warnings if w.code == "unbindable_computation"]
    assert unbindable.path == "/c/binary.md" and "not UTF-8" in unbindable.message


def test_a_problem_in_an_inline_block_names_its_file_line(make_bundle: MakeBundle) -> None:
    """An annotation for a problem of an inline block had no line (AC QA): the block's
    line becomes the file's, where CI annotations point."""
    text = computation(
        "  - {name: year, type: integer}\n", "SELECT 1\nWHERE y = $year\n  AND r = $region"
    )
    root = make_bundle({"undeclared.md": text})
    (problem,) = [
        w for w in validate(Bundle.load(root)).warnings if w.code == "unbindable_computation"
    ]
    lines = text.split("\n")
    expected = next(i for i, line in enumerate(lines, 1) if "$region" in line)
    assert problem.message.endswith(f"(line {expected})"), problem.message


@pytest.mark.parametrize("written", ["../../outside.sql", "..%2F..%2Foutside.sql"])
def test_a_computation_file_outside_the_bundle_is_the_loads_problem_alone(
    make_bundle: MakeBundle, written: str
) -> None:
    """AC QA: ``..%2F..%2Foutside.sql`` was the load's unsafe_link and, read undecoded,
    validate's unbindable_computation ("not in the bundle") too, and binding refused it as
    not attestable, where ``../../outside.sql`` is unsafe_path."""
    from okfx.errors import UnsafePath

    text = (
        "---\ntype: Attested Computation\nruntime: duckdb\n"
        f"computation: {written}\nparameters: []\n---\n\nTotals.\n"
    )
    root = make_bundle({"c/total.md": text})
    (root.parent / "outside.sql").write_text("SELECT 1\n")
    bundle = Bundle.load(root)
    report = validate(bundle)
    assert report.by_code.get("unsafe_link") == 1
    assert "unbindable_computation" not in report.by_code
    with pytest.raises(UnsafePath):
        bind(bundle, bundle.get("/c/total.md"), {})
