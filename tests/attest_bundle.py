"""A small bundle of Attested Computations the attestation tests share (a plain module, so
tests import it by name without a second conftest.py)."""

from __future__ import annotations

from pathlib import Path

from conftest import write_tree

REVENUE_SQL = """\
-- Recognised revenue for one year.
SELECT SUM(amount) AS revenue
FROM orders
WHERE status = 'delivered'
  AND year = $year
  AND ($region IS NULL OR region = $region)
"""

CONTRACT = """\
type: Attested Computation
title: {title}
runtime: {runtime}
parameters:
  - {{ name: year, type: integer, required: true }}
  - {{ name: region, type: string, required: false }}
executor:
  resource: /skills/run.md
  receipt: [run_id, executed_sql, result]
attester:
  resource: /attesters/check.py
verified: {{ by: human:ana, at: 2026-06-01T00:00:00Z }}
stale_after: 2026-12-31T00:00:00Z
"""


def computation(title: str, body: str, runtime: str = "duckdb", extra: str = "") -> str:
    return "---\n" + CONTRACT.format(title=title, runtime=runtime) + extra + "---\n" + body


FILES: dict[str, str | bytes] = {
    "index.md": "# Start\n",
    "computations/revenue.md": computation(
        "Revenue", f"# Computation\n\n```sql\n{REVENUE_SQL}```\n"
    ),
    "computations/revenue-file.md": computation(
        "Revenue (file)", "# Notes\n\nThe SQL is a file.\n", extra="computation: sql/revenue.sql\n"
    ),
    "computations/sql/revenue.sql": REVENUE_SQL,
    "computations/escape.md": computation(
        "Escape", "# Notes\n", extra="computation: ../../../../etc/passwd\n"
    ),
    "computations/bq.md": computation(
        "BigQuery revenue",
        "# Computation\n\n```sql\nSELECT SUM(amount) FROM `acme.sales.orders` "
        "WHERE year = @year AND (@region IS NULL OR region = @region)\n```\n",
        runtime="bigquery",
    ),
    "computations/python.md": computation(
        "Python", "# Computation\n\n```python\nx = 1\n```\n", "python"
    ),
    "computations/undeclared.md": computation(
        "Undeclared", "# Computation\n\n```sql\nSELECT 1 WHERE x = $other\n```\n"
    ),
    "computations/two-statements.md": computation(
        "Two statements",
        "# Computation\n\n```sql\nSELECT COUNT(*) FROM orders WHERE year = $year;\n"
        "DROP TABLE orders\n```\n",
    ),
    "metrics/revenue.md": "---\ntype: Metric\ntitle: Revenue\n---\nSee the computation.\n",
    "skills/run.md": "---\ntype: Skill\ntitle: Run\n---\nRun it.\n",
}

ORDERS_CSV = """\
order_id,status,year,region,amount
1,delivered,2026,north,100.5
2,delivered,2026,south,40
3,returned,2026,north,999
4,delivered,2025,north,7
"""


def write_bundle(root: Path) -> Path:
    return write_tree(root, FILES)


def write_orders(path: Path) -> Path:
    path.write_text(ORDERS_CSV, encoding="utf-8")
    return path
