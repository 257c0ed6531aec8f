"""The ``okfx`` command line: thin wrappers over the library.

Exit codes: 0 ok, 1 not found / not conformant, 2 usage error.
"""

from __future__ import annotations

import json
import sys
from typing import Any

import click

from . import __version__
from .bundle import Bundle
from .validate import validate as validate_bundle

__all__ = ["main"]


def _load(source: str) -> Bundle:
    try:
        return Bundle.load(source)
    except FileNotFoundError as exc:
        raise click.UsageError(f"{exc}. BUNDLE is a folder, a git URL or an archive.") from exc
    except (ValueError, RuntimeError, TimeoutError) as exc:
        raise click.ClickException(str(exc)) from exc


def _emit_json(payload: Any) -> None:
    click.echo(json.dumps(payload, indent=2, ensure_ascii=False, sort_keys=False))


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="okfx")
def cli() -> None:
    """Read, search and validate Open Knowledge Format (OKF v0.2) bundles."""


@cli.command()
@click.argument("bundle")
@click.option("--json", "as_json", is_flag=True, help="Print the report as stable JSON.")
def validate(bundle: str, as_json: bool) -> None:
    """Check BUNDLE against the OKF v0.2 conformance rules (spec §11).

    Errors break rules 1-2 (a non-reserved .md file without parseable frontmatter
    or without a non-empty `type`); broken links, unknown statuses and bad optional
    fields are warnings. Exits 0 when conformant, 1 when not.

    Example:

        okfx validate examples/knowledge --json
    """
    report = validate_bundle(_load(bundle))
    if as_json:
        _emit_json(report.to_dict())
    else:
        mark = click.style("✓", fg="green") if report.conformant else click.style("✗", fg="red")
        verdict = "conformant" if report.conformant else "NOT conformant"
        version = f", declares okf_version {report.okf_version}" if report.okf_version else ""
        click.echo(
            f"{mark} {report.bundle}: {verdict} with OKF v0.2 "
            f"({report.concepts} concepts, {len(report.errors)} errors, "
            f"{len(report.warnings)} warnings{version})"
        )
        for label, problems, colour in (
            ("error", report.errors, "red"),
            ("warning", report.warnings, "yellow"),
        ):
            for problem in problems:
                tag = click.style(f"{label}[{problem.code}]", fg=colour)
                click.echo(f"  {tag} {problem.path}: {problem.message}")
    sys.exit(0 if report.conformant else 1)


def main() -> None:
    """Console-script entry point."""
    cli(prog_name="okfx")
