"""The ``okfx`` command line: thin wrappers over the library.

Each read command calls one :class:`~okfx.tools.toolbox.Toolbox` tool: ``--json`` prints the tool's
payload unchanged (the stable, scriptable form), otherwise :mod:`okfx.cli.render` formats it.
Exit codes: 0 ok, 1 not found / not conformant / failed, 2 usage error (a bad option or
argument, an unsafe path).
"""

from __future__ import annotations

import functools
import gc
import logging
import math
import os
import re
import sys
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TextIO, TypeVar

import click
from click.core import ParameterSource

from okfx import blas
from okfx.attest.lint import validate as validate_bundle
from okfx.bundle.bundle import Bundle, as_name, folder_name, told_apart
from okfx.bundle.sourceform import in_source_terms, source_form
from okfx.bundle.validate import why_empty
from okfx.cli import render, target, webserve
from okfx.cli.executors import executor_options, executor_settings
from okfx.cli.extras import MissingExtra, need_extra
from okfx.cli.progress import status
from okfx.cli.terminal import json_text, visible, visible_data
from okfx.errors import InvalidArgument, OKFError, Unreadable
from okfx.gcpause import freeze_after_loads
from okfx.memory import SERVER_ARENAS, limit_malloc_arenas
from okfx.sources.errors import ArchiveError, GitNotFound, SourceSpecError, UnsafeSourceError
from okfx.sources.spec import (
    ArchiveSource,
    FetchOnce,
    GitSource,
    archive_stem,
    fetch_key,
    git_default_name,
    is_commit_id,
    parse_source,
    redact,
)
from okfx.tools import pageversions
from okfx.tools.grepping import prepare_grep
from okfx.tools.manager import KnowledgeManager
from okfx.tools.payloads import error_payload
from okfx.tools.preload import preload as map_texts
from okfx.tools.prewarm import prewarm
from okfx.tools.toolbox import Toolbox
from okfx.trust import TRUST_TIERS
from okfx.version import __version__

__all__ = ["cli", "main"]

#: Tool error codes that mean the caller asked for something malformed: exit 2, like click;
#: and a command that refuses to start without an extra (as without a needed token).
USAGE_CODES = frozenset(
    {"invalid_argument", "invalid_parameter", "invalid_regex", "unsafe_path", "too_large"}
    | {MissingExtra.code}
)
#: What the viewer needs (the web extra): okfx.web names the first package it misses.
_WEB_MODULES = ("okfx.web", "uvicorn")

F = TypeVar("F", bound=Callable[..., Any])


# -- loading -----------------------------------------------------------------------------------
# A NAME is letters and digits of any script, "_", "." and "-" (CLI QA: 知识库=DIR read
# as a missing folder, though a folder named 知识库 gives that name).
_NAMED = re.compile(r"([^\W_][\w.\-]{0,63})=(.+)", re.DOTALL)
# A character a NAME of NAME=SOURCE does not take.


def named_source(text: str) -> tuple[str | None, str]:
    """``NAME=SOURCE`` as ``(NAME, SOURCE)``; ``(None, text)`` for a plain source, and for
    anything that exists as a path (a folder may hold ``=`` in its name)."""
    match = _NAMED.fullmatch(text)
    if match is None or os.path.exists(text):
        return None, text
    return match.group(1), match.group(2)


def _load(source: str) -> Bundle:
    ctx = click.get_current_context(silent=True)
    state_cache = (ctx.find_root().obj or {}).get("state_cache") if ctx else None
    options = ctx.meta.get(_LOAD_OPTIONS, {}) if ctx else {}
    name, source = named_source(source)
    shown = redact(source)  # a git URL's token never reaches a terminal, a log or an agent
    if options.get("refresh") and ctx is not None:
        # One fetch per source and command, whatever folders of it are loaded.
        fetched: FetchOnce = ctx.meta.setdefault("okfx.fetched", FetchOnce())
        options = {**options, "refresh": fetched.refresh(source, True)}
    try:
        with status(f"loading {shown}") as progress:
            return Bundle.load(
                source, name, progress=progress.update, state_cache=state_cache, **options
            )
    except OKFError:
        raise
    except (
        FileNotFoundError,
        NotADirectoryError,
        UnsafeSourceError,
        SourceSpecError,
        GitNotFound,
    ) as exc:
        # BUNDLE names nothing okfx can load: the caller's argument is wrong
        reason = redact((exc.strerror if isinstance(exc, OSError) else None) or str(exc))
        misplaced = _misplaced(source, ctx)
        if misplaced:
            raise InvalidArgument(f"cannot load {shown}: {misplaced}") from None
        head, equals, _ = source.partition("=")
        if equals and named_source(source)[0] is None and "/" not in head and "\\" not in head:
            reason += (  # "my kb=DIR": a NAME= the pattern refused (CLI QA)
                f"; if {head!r} is meant as a NAME, a bundle NAME takes letters, digits, "
                "'_', '.' and '-', and no space"
            )
        stop = "" if reason.endswith(("?", ".")) else "."  # not "did you mean 'kb'?."
        raise InvalidArgument(
            f"cannot load {shown}: {reason}{stop} BUNDLE is a folder, a git URL or an archive"
        ) from None
    except (OSError, ValueError, RuntimeError, TimeoutError) as exc:
        reason = (exc.strerror if isinstance(exc, OSError) else None) or str(exc)
        if type(exc) is ArchiveError and reason.startswith("refusing entry"):
            # a policy refusal of a whole archive: fetching it again cannot help (sources QA)
            reason += ": okfx never extracts such an entry; build the archive without it"
        elif type(exc) is ArchiveError:  # not ArchiveLimitError, whose message says the cap
            reason += ": the file may be cut short or not an archive; fetch or build it again"
        raise Unreadable(f"cannot load {shown}: {redact(reason)}", path=shown) from None


class _Seconds(click.FloatRange):
    """A number of seconds from 1 up to a year: ``nan`` and ``inf`` pass a FloatRange (sources
    QA: ``nan`` ran git ls-remote back to back, ``inf`` ended the refresh thread)."""

    def convert(self, value: Any, param: Any, ctx: Any) -> Any:
        seconds = super().convert(value, param, ctx)
        if not math.isfinite(seconds):
            self.fail(f"{value!r} is no number of seconds: give one from 1 to 31536000", param, ctx)
        return seconds


INTERVAL = _Seconds(min=1.0, max=365 * 24 * 3600.0)


def _said(bundle: Bundle) -> str:
    """Why ``bundle`` has no concept, a fetched one's folders named as its source."""
    said = why_empty(bundle)
    return in_source_terms(said, str(bundle.root), bundle.source) if bundle.origin else said


def _loaded_as(bundle: Bundle) -> str:
    """What loads ``bundle`` again: its source, or its folder."""
    return (source_form(bundle.source, "") if bundle.origin else None) or str(bundle.root)


_semantic_flags = [
    click.option(
        "--semantic", is_flag=True,
        help="Hybrid search: BM25F and an embedding model (the semantic extra: docs/install.md).",
    ),
    click.option(
        "--semantic-max", type=click.IntRange(1), default=20_000, show_default=True,
        metavar="N", help="Refuse to encode more concepts than this (encoding is ~4-40/s).",
    ),
]  # fmt: skip


def _semantic(func: Callable[..., Any]) -> Callable[..., Any]:
    for option in reversed(_semantic_flags):
        func = option(func)
    return func


def _enable_semantic(target: Any, max_concepts: int, *, now: bool = False, **options: Any) -> None:
    """``target.enable_semantic`` (and, with ``now``, the vectors of the index a search
    will use), with the CLI's error for a missing extra or the size cap."""
    try:
        target.enable_semantic(max_concepts=max_concepts, **options)
        if now:
            target.prepare_search()
    except OKFError:
        raise  # reported as every failure is: error[code], or its payload with --json


def _told_apart(sources: Sequence[str]) -> list[str]:
    """``sources`` with ``NAME=`` put before each plain folder whose default name another
    plain folder shares (``AV-OKF/knowledge`` and ``okf-poc/knowledge``): named by its
    parent folder too (``AV-OKF-knowledge``), and said on stderr. Before, such a pair
    stopped ``okfx serve`` before an MCP client could connect, and the client saw only
    "Connection closed" (MCP QA). The same folder twice, or names the parents do not
    tell apart, stay as given (the error below names them). A plain folder given again
    is read once, and said so: it had stopped ``okfx serve`` (platform QA); so is one
    folder of one git fetch or archive given again (sources QA: loaded twice)."""
    folders: list[Path | None] = []  # each source's folder, when a plain one
    kept: list[str] = []
    given: dict[Path | str, str] = {}
    for source in sources:
        name, text = named_source(source)
        folder = Path(text).resolve() if name is None and os.path.isdir(text) else None
        same = folder or (_fetched_folder(text) if name is None else None)
        if same is not None and same in given:
            click.echo(
                f"okfx: {redact(text)} is {redact(given[same])} again; reading it once", err=True
            )
            continue
        if same is not None:
            given[same] = text
        folders.append(folder)
        kept.append(source)
    sources = kept
    renamed = told_apart(f for f in folders if f is not None)
    out = []
    for source, folder in zip(sources, folders, strict=True):
        if folder is None or folder not in renamed:
            out.append(source)
            continue
        text = named_source(source)[1]
        click.echo(
            f"okfx: two folders are named {folder_name(folder)!r}; naming {text} "
            f"{renamed[folder]!r} (name bundles yourself with NAME=SOURCE)",
            err=True,
        )
        out.append(f"{renamed[folder]}={text}")
    return out


def _misplaced(source: str, ctx: click.Context | None) -> str:
    """For a BUNDLE that is no folder, what the reader likely meant, or "": the query or
    path written first, the bundle after it (CLI QA: "composite resource" was a missing
    folder); or a concept's file given as the bundle."""
    if ctx is None or os.path.exists(source) and not source.endswith(".md"):
        return ""
    command = f"okfx {ctx.info_name}"
    last = next(
        (ctx.params[key] for key in ("query", "path", "pattern") if ctx.params.get(key)), None
    )
    if isinstance(last, str) and not os.path.exists(source) and os.path.isdir(last):
        return (
            f"it is no folder, and {last!r} is one: BUNDLE comes first, then what to "
            f"look for, as in {command} {last} {source!r}"
        )
    if source.endswith(".md") and os.path.isfile(source):
        return (
            "it is a markdown file; BUNDLE is the folder of the bundle that holds it, and "
            "one concept is read with okfx read BUNDLE PATH"
        )
    return ""


def _fetched_folder(text: str) -> str | None:
    """One key for every spelling of one folder of one git fetch or archive (sources QA:
    the same URL or archive given twice was loaded twice, as ``catalog`` and
    ``kb1-catalog``); None for anything else."""
    try:
        parsed = parse_source(text)
    except (ValueError, TypeError):
        return None  # _load says what is wrong with it
    key = fetch_key(parsed)  # parsed once, not again inside
    if key is None or not isinstance(parsed, GitSource | ArchiveSource):
        return None
    return f"{key}#{(parsed.subdir or '').strip('/')}"


def _told_by_source(source: str, name: str) -> list[str]:
    """For an unnamed git or archive source whose bundle's name another bundle has, the
    names that say where it comes from, best first: a pinned commit's (``catalog-af9c122``),
    a branch's or tag's (``catalog-dev``), the repository's (``kb1-okf`` for
    ``.../kb1.git#:okf``), or the archive's file name and then its folder too
    (``export-okf``, ``teamb-export-okf``). Platform QA: plain folders were told apart,
    but a folder and a clone both named ``okf`` stopped the command; sources QA: two pins,
    or three refs, of one repository were told apart by the repository's name alone, and
    the third was refused. Empty for a named source or a folder (:func:`_told_apart`
    tells folders apart, before anything loads)."""
    if named_source(source)[0] is not None or os.path.isdir(source):
        return []
    try:
        parsed = parse_source(source)
    except (ValueError, TypeError):
        return []
    if isinstance(parsed, GitSource):
        owner = git_default_name(GitSource(parsed.url))
        pin = parsed.ref if is_commit_id(parsed.ref) else None
        told = [f"{name}-{pin[:7]}"] if pin else []
        if parsed.ref and not pin:  # a branch or tag: catalog-dev, catalog-v1 (sources QA)
            told.append(f"{name}-{parsed.ref}")
        told.append(f"{owner}-{name}")
    elif isinstance(parsed, ArchiveSource):
        stem = archive_stem(parsed.path)
        parent = folder_name(parsed.path.resolve().parent)
        told = [f"{stem}-{name}", f"{parent}-{stem}-{name}"]
    else:
        return []
    return [other for other in dict.fromkeys(as_name(t) for t in told) if other != name]


def _renamed(source: str, name: str, given: Mapping[str, int]) -> tuple[str, Bundle] | None:
    """``source`` loaded again under the first name :func:`_told_by_source` gives it
    that no bundle has yet, said on stderr; ``None`` when it has none (a folder)."""
    other = next((told for told in _told_by_source(source, name) if told not in given), None)
    if other is None:
        return None
    click.echo(
        f"okfx: two bundles are named {name!r}; naming {redact(source)} {other!r} "
        "(name bundles yourself with NAME=SOURCE)",
        err=True,
    )
    source = f"{other}={source}"
    return source, _load(source)


def _manager(sources: Sequence[str], *, serve_what_loads: bool = False) -> KnowledgeManager:
    """The bundles of SOURCES. A source that does not load, or whose name another takes,
    stops the command; with ``serve_what_loads`` (``okfx serve``) it is said on stderr
    and listed as unavailable, and the others are served (platform QA: one team's broken
    archive took every team's bundles away, and an MCP client saw "Connection closed")."""
    manager = KnowledgeManager()
    loaded: list[tuple[str, Bundle]] = []  # in the order given
    given: dict[str, int] = {}  # a bundle name: its place in ``loaded``
    failed: list[tuple[str, OKFError]] = []
    for source in _told_apart(sources):
        try:
            bundle = _load(source)
            if bundle.name in given:
                # a clone or an archive takes a name of its own, whichever came first
                # (docs QA: an archive given before a folder of its name stopped the
                # command, and after it was renamed)
                at = given[bundle.name]
                renamed = _renamed(source, bundle.name, given)
                if renamed is not None:
                    source, bundle = renamed
                elif (earlier := _renamed(loaded[at][0], bundle.name, given)) is not None:
                    del given[bundle.name]
                    loaded[at] = earlier
                    given[earlier[1].name] = at
            if bundle.name in given:  # two bundles with one name
                first = redact(named_source(loaded[given[bundle.name]][0])[1])
                second = redact(named_source(source)[1])
                raise InvalidArgument(
                    f"two bundles are named {bundle.name!r} ({first} and {second}); name "
                    f"them as NAME=SOURCE, e.g. one={first} two={second}"
                )
        except OKFError as exc:
            if not serve_what_loads:
                raise
            failed.append((redact(named_source(source)[1]), exc))
            continue
        given[bundle.name] = len(loaded)
        loaded.append((source, bundle))
    for _, bundle in loaded:
        manager.add(bundle)
    if failed and not len(manager):
        raise failed[0][1]  # nothing to serve: the first reason, as without the option
    for shown, error in failed:
        manager.note_unavailable(shown, redact(error.message))
        click.echo(visible(f"okfx: not serving {shown}: {redact(error.message)}"), err=True)
    return manager


def _reloads(watched: bool, workers: int) -> str:
    """How a server's bundles are reloaded (``KnowledgeManager.reloads``): what a read of
    an edited file tells the agent about when search catches up."""
    return "operator" if workers > 1 else "watch" if watched else "never"


def _say_unwatched(manager: KnowledgeManager) -> None:
    """Name the bundles neither ``--watch`` nor ``--refresh-interval`` reloads: those
    extracted from an archive (sources QA: an operator replaced the archive and waited)."""
    for bundle in manager.bundles.values():
        if (bundle.origin or {}).get("kind") == "archive":
            click.echo(
                f"okfx: {bundle.name} is read from an archive, which is not reloaded while "
                "it is served: start again with a new archive (--refresh extracts it again)",
                err=True,
            )


def _toolbox(
    sources: Sequence[str], bundle_name: str | None = None, path: str | None = None
) -> tuple[Toolbox, str | None, str]:
    """The toolbox over SOURCES, the bundle chosen (by --bundle, or by PATH written as
    ``bundle:path``) and the path in it. With several bundles and none chosen, the tools
    decide as they do for an agent: a listing spans them all, a path is read in the one
    bundle that holds it, and one that several hold asks for --bundle."""
    manager = _manager(sources)
    if path is not None:
        bundle_name, path = target.split(manager.names, path, bundle_name)
        bundle_name, path = _on_disk(manager, bundle_name, path)
    return Toolbox(manager, controls_as_is=True), bundle_name, path or ""


def _on_disk(
    manager: KnowledgeManager, bundle_name: str | None, path: str
) -> tuple[str | None, str]:
    """PATH given as a file on disk (a shell's tab completion gives one): the bundle path
    of a file inside a loaded bundle, or an error naming the bundles for one outside them
    all (CLI QA: another bundle's /.../docs/index.md was answered with this bundle's
    /index.md as "did you mean")."""
    if not os.path.isabs(path) or not os.path.exists(path):
        return bundle_name, path
    real = Path(path).resolve()
    for bundle in manager.bundles.values():
        root = Path(bundle.root).resolve()
        if real.is_relative_to(root):
            if bundle_name is None or manager.bundle(bundle_name) is bundle:
                inside = real.relative_to(root).as_posix()
                return bundle.name, "/" if inside == "." else "/" + inside
    names = ", ".join(repr(name) for name in manager.names)
    raise InvalidArgument(
        f"{path} is a file on disk outside the bundle{'s' if len(manager) > 1 else ''} "
        f"loaded ({names}): give a path inside a bundle (/tables/orders.md), or load the "
        "bundle that holds this file"
    )


#: The options of ``okfx`` itself, which go before the command.
_ROOT_OPTIONS = frozenset({"--state-cache", "--no-state-cache"})


class _Command(click.Command):
    """A command whose failures (an :class:`~okfx.errors.OKFError` raised while loading or
    choosing bundles) are reported like a tool's error: ``error[code]: message`` on stderr,
    or the error payload on stdout under ``--json``, with the exit code of the code."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        given = list(args)  # click consumes the list
        try:
            return super().parse_args(ctx, args)
        except click.MissingParameter as exc:
            raise _missing_argument(self, ctx, exc, given) from None
        except click.NoSuchOption as exc:
            if exc.option_name not in _ROOT_OPTIONS:
                raise
            # docs QA: "No such option" and nothing more, for an option put where most go
            written = exc.option_name + (" DIR" if exc.option_name == "--state-cache" else "")
            raise click.UsageError(
                f"{exc.option_name} is an option of okfx itself: put it before the "
                f"command (okfx {written} {ctx.info_name} ...)",
                ctx,
            ) from None

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except OKFError as exc:
            as_json = bool(ctx.params.get("as_json")) or ctx.params.get("fmt") == "json"
            _finish(error_payload(exc), as_json, render.error)


def _missing_argument(
    command: click.Command, ctx: click.Context, exc: click.MissingParameter, given: list[str]
) -> click.MissingParameter:
    """``exc``, saying which argument is missing after ``BUNDLE...``. QA: click fills the
    argument after ``BUNDLE...`` first, so ``okfx search kb`` said "Missing argument
    'BUNDLE...'" when the bundle was given and QUERY was not."""
    arguments = [p for p in command.params if isinstance(p, click.Argument)]
    if exc.param is None or exc.param.name != "sources" or len(arguments) < 2:
        return exc
    after = arguments[-1]
    name = after.human_readable_name  # QUERY, PATH, PATTERN
    order = f"give BUNDLE... then {name}"
    values, _, _ = command.make_parser(ctx).parse_args(args=given)
    if not isinstance(values.get(after.name), str):  # nothing given: both are missing
        return click.MissingParameter(ctx=ctx, param=exc.param, param_hint=f"'BUNDLE...' ({order})")
    return click.MissingParameter(ctx=ctx, param=after, param_hint=f"'{name}' ({order})")


class _Group(click.Group):
    command_class = _Command


def _finish(payload: dict[str, Any], as_json: bool, show: Callable[[dict[str, Any]], str]) -> None:
    """Print a tool payload and exit with the code its error (if any) calls for."""
    err = payload.get("error")
    code = 0 if not err else 2 if err.get("code") in USAGE_CODES else 1
    if err and err.get("code") == "not_attestable":
        code = 3  # okfx cannot judge it: not the 1 of a verdict that failed
    if as_json:
        click.echo(json_text(payload))
    elif err:
        click.echo(render.error(visible_data(payload)), err=True)
    else:
        click.echo(show(visible_data(payload)))  # bundle text cannot drive the terminal
    sys.exit(code)


# -- shared options ----------------------------------------------------------------------------
_LOAD_OPTIONS = "okfx.load_options"


def _remember(ctx: click.Context, param: click.Parameter, value: Any) -> None:
    """Keep a load option for :func:`_load` (the commands never see it)."""
    ctx.meta.setdefault(_LOAD_OPTIONS, {})[param.name] = value


def _load_options(func: F) -> F:
    """okfx's extensions beyond the spec (docs/okf.md), on every command that loads."""
    func = click.option(
        "--exclude", metavar="GLOB", multiple=True, expose_value=False, callback=_remember,
        help="Leave .md files matching GLOB out of the concepts (README.md, templates/; "
        "repeatable). A bundle can list its own in its root index.md: exclude: [...].",
    )(func)  # fmt: skip
    func = click.option(
        "--refresh", is_flag=True, expose_value=False, callback=_remember,
        help="Clone git sources and extract archives again, rather than read the cached "
        "copy (a branch's new commits); once per source. A source pinned to a commit is "
        "kept (okfx cache clear --sources removes it).",
    )(func)  # fmt: skip
    return click.option(
        "--wikilinks", is_flag=True, expose_value=False, callback=_remember,
        help="Also follow Obsidian-style [[name]] links.",
    )(func)  # fmt: skip


def _sources(func: F) -> F:
    func = _load_options(func)
    return click.argument("sources", metavar="BUNDLE...", nargs=-1, required=True)(func)


def _json(func: F) -> F:
    return click.option(
        "--json", "as_json", is_flag=True, help="Print the tool's payload as stable JSON."
    )(func)


def _bundle_name(func: F) -> F:
    return click.option(
        "-b",
        "--bundle",
        "bundle_name",
        metavar="NAME",
        help="The loaded bundle to use, by name (with several: for a path that more than "
        "one of them holds; search and grep search them all without it).",
    )(func)


def _filters(func: F) -> F:
    for option in reversed(
        [
            click.option("--type", "type_", metavar="TYPE", help="Only concepts of this type."),
            click.option(
                "--tag", "tags", multiple=True, help="Only concepts with this tag (repeatable)."
            ),
            click.option("--dir", "directory", metavar="DIR", help="Only concepts under DIR."),
            click.option(
                "--include-deprecated", is_flag=True, help="Also show deprecated concepts."
            ),
        ]
    ):
        func = option(func)
    return func


def _listen(port: int, scope: str, token: str) -> Callable[[F], F]:
    """``--host``, ``--port`` and ``--token`` of a command that serves HTTP; ``scope``
    starts each help text (``"HTTP: "`` where another transport exists)."""

    def text(words: str) -> str:
        return scope + words if scope else words[:1].upper() + words[1:]

    def add(func: F) -> F:
        func = click.option(
            "--token-file", metavar="PATH", type=click.File("r", encoding="utf-8"),
            help=text("read the token from the first line of PATH (instead of --token)."),
        )(func)  # fmt: skip
        func = click.option(
            "--token", envvar="OKFX_TOKEN", metavar="TOKEN",
            help=text(
                f"{token} [env OKFX_TOKEN]; needed to bind any non-loopback address. Any "
                "user sees a command line in ps: prefer OKFX_TOKEN or --token-file."
            ),
        )(func)  # fmt: skip
        func = click.option(
            "--port", type=click.IntRange(0, 65535), default=port, show_default=True,
            help=text("port to bind (0 picks a free one)."),
        )(func)  # fmt: skip
        return click.option(
            "--host", default="127.0.0.1", show_default=True, help=text("address to bind.")
        )(func)

    return add


def _trust(func: F) -> F:
    func = click.option(
        "--exclude-stale", is_flag=True, help="Leave out concepts past their stale_after."
    )(func)
    return click.option(
        "--trust-tier", type=click.Choice(TRUST_TIERS), help="Only this trust tier."
    )(func)


# -- commands ----------------------------------------------------------------------------------
@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="okfx")
@click.option(
    "--state-cache",
    metavar="DIR",
    type=click.Path(file_okay=False),
    help="Keep the state cache (parsed bundles and search indexes, so unchanged bundles "
    "load without parsing) in DIR instead of the user cache folder. Also "
    "OKFX_STATE_CACHE=DIR.",
)
@click.option(
    "--no-state-cache",
    is_flag=True,
    help="Neither read nor write the state cache (also OKFX_STATE_CACHE=off).",
)
@click.pass_context
def cli(ctx: click.Context, state_cache: str | None, no_state_cache: bool) -> None:
    """Read, search, validate and serve Open Knowledge Format (OKF v0.2) bundles.

    BUNDLE is a folder, a git URL or an archive; most commands take several. Write
    NAME=BUNDLE to name one (two folders both called okf: a=one/okf b=two/okf).
    """
    ctx.obj = {"state_cache": False if no_state_cache else state_cache}
    if os.environ.get("NO_COLOR"):  # no-color.org, also on a terminal (CI runners with a pty)
        ctx.color = False


@cli.command()
@click.argument("bundle")
@_load_options
@click.option("--json", "as_json", is_flag=True, help="Print the report as stable JSON.")
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["text", "json", "github"]),
    default=None,
    help="text (default), json (as --json) or github: one GitHub Actions annotation "
    "per problem, so a pull request shows them on the files.",
)
@click.option("--strict", is_flag=True, help="Warnings fail the check too (exit 1).")
@click.option(
    "--all", "everything", is_flag=True, help="List every problem, not the first few per code."
)
def validate(bundle: str, as_json: bool, fmt: str | None, strict: bool, everything: bool) -> None:
    """Check BUNDLE against the OKF v0.2 conformance rules (spec §11).

    Errors break rules 1-2 (a non-reserved .md file without parseable frontmatter
    or without a non-empty `type`), and a folder without any concept is one; broken
    links, unknown statuses and bad optional fields are warnings. The report groups
    them by code (--all lists every one). Exits 0 when conformant, 1 when not; with
    --strict, 1 as well when there is any warning.

    Example:

    \b
        okfx validate examples/knowledge --json
        okfx validate ./knowledge --strict --format github   # in a bundle's CI
    """
    if as_json and fmt not in (None, "json"):
        raise click.UsageError(f"--json and --format {fmt} ask for two formats; give one")
    fmt = "json" if as_json else fmt or "text"
    _check_branch_head(bundle)
    try:
        loaded = _load(bundle)
    except OKFError as exc:
        if fmt == "github":  # a wrong path in a CI job: shown on the run, not only in its log
            click.echo(render.github_failure(exc))
        raise
    report = validate_bundle(loaded, now=datetime.now(UTC))
    if fmt == "json":
        click.echo(json_text(report.to_dict(strict)))
    else:
        root = _display_root(named_source(bundle)[1], loaded, github=fmt == "github")
        show = render.github_annotations if fmt == "github" else render.report
        click.echo(show(report, strict=strict, everything=everything, root=root))
    sys.exit(0 if report.passes(strict) else 1)


def _check_branch_head(text: str) -> None:
    """Before ``okfx validate`` loads a git source that follows a branch or tag: when its
    remote ref has moved past the cached clone, fetch it again, as ``--refresh`` would
    (author QA: a CI job validating ``repo#main:kb`` passed on the cached commit after a
    commit broke the bundle). One ``git ls-remote``; when the remote cannot be asked, the
    cached clone is checked, and stderr says so."""
    ctx = click.get_current_context(silent=True)
    if ctx is None or ctx.meta.get(_LOAD_OPTIONS, {}).get("refresh"):
        return
    from okfx.sources.errors import GitError
    from okfx.sources.refresh import cached_commit, remote_commit
    from okfx.sources.spec import GitSource, is_commit_id, parse_source

    try:
        source = parse_source(named_source(text)[1])
    except (SourceSpecError, UnsafeSourceError, OSError, ValueError):
        return  # _load says what is wrong with it
    if not isinstance(source, GitSource) or is_commit_id(source.ref):
        return
    cached = cached_commit(source, None)
    if cached is None:
        return  # the load clones it now
    try:
        head = remote_commit(source)
    except (GitError, GitNotFound, OSError, TimeoutError) as exc:
        click.echo(
            visible(
                f"okfx: could not ask {redact(source.url)} for its newest commit "
                f"({redact(str(exc))}); checking the cached clone at {cached[:12]}"
            ),
            err=True,
        )
        return
    if head != cached:
        ctx.meta.setdefault(_LOAD_OPTIONS, {})["refresh"] = True


def _display_root(source: str, bundle: Bundle, github: bool = False) -> str:
    """How to name the bundle's files to the reader: for a local folder, relative to the
    working directory (a CI job runs at the repository root; GitHub takes no other), or
    absolute when the folder was given so, else nothing (the bundle-relative path alone)
    for a git URL or an archive."""
    if not os.path.isdir(source):
        return ""
    if os.path.isabs(source) and not github:
        return Path(bundle.root).as_posix()
    root = Path(os.path.relpath(bundle.root)).as_posix()
    workspace = os.environ.get("GITHUB_WORKSPACE", "") if github else ""
    if workspace and os.path.isabs(workspace):
        # GitHub reads file= from the repository root: a step with working-directory:
        # gave file=a.md for kb/a.md (CI QA F10). Only for a bundle inside the workspace.
        inside = os.path.relpath(os.path.realpath(bundle.root), os.path.realpath(workspace))
        if inside != os.pardir and not inside.startswith(os.pardir + os.sep):
            root = Path(inside).as_posix()
    return "" if root == "." else root


@cli.command()
@_sources
@_json
def bundles(sources: tuple[str, ...], as_json: bool) -> None:
    """List the loaded bundles.

    One row per BUNDLE: its name, concept count, declared OKF version and warnings.

    Example:

    \b
        okfx bundles examples/knowledge ../other-bundle --json
    """
    _finish(Toolbox(_manager(sources), controls_as_is=True).list_bundles(), as_json, render.bundles)


@cli.command("index")
@_sources
@_bundle_name
@_filters
@_trust
@click.option(
    "--limit", type=click.IntRange(1), default=50, show_default=True,
    help="Rows to show (at most 200; more reads as 200).",
)  # fmt: skip
@click.option("--offset", type=click.IntRange(0), default=0, show_default=True)
@click.option(
    "--prepare", is_flag=True,
    help="Build the search index of the BUNDLEs together, as okfx serve over them "
    "searches, into the state cache, and exit: servers then start warm.",
)  # fmt: skip
@_semantic
@_json
def index_cmd(
    sources: tuple[str, ...],
    bundle_name: str | None,
    type_: str | None,
    tags: tuple[str, ...],
    directory: str | None,
    include_deprecated: bool,
    trust_tier: str | None,
    exclude_stale: bool,
    limit: int,
    offset: int,
    prepare: bool,
    semantic: bool,
    semantic_max: int,
    as_json: bool,
) -> None:
    """List concepts as frontmatter rows.

    One row per concept (path, type, title, trust tier, status, staleness), no bodies,
    a page at a time; filters narrow the list.

    Example:

    \b
        okfx index examples/knowledge --dir /metrics --trust-tier human-reviewed

    With --semantic, compute the concepts' vectors for hybrid search instead (with a
    progress bar), so that later searches and servers find them cached. With --prepare,
    build the search index the same BUNDLEs served together use (run it before starting
    servers over large bundles: a server's first search then reads it back).
    """
    if prepare:
        _prepare_index(sources)
    if semantic:
        _precompute(sources, semantic_max)
    if prepare or semantic:
        return
    box, bundle_name, _ = _toolbox(sources, bundle_name)
    payload = box.list_concepts(
        bundle=bundle_name,
        directory=directory,
        type=type_,
        tags=list(tags) or None,
        trust_tier=trust_tier,
        include_deprecated=include_deprecated,
        include_stale=not exclude_stale,
        limit=limit,
        offset=offset,
    )
    _finish(payload, as_json, render.index)


@cli.command()
@_sources
@click.argument("path")
@_bundle_name
@click.option("--section", metavar="HEADING", help="Read only the section under this heading.")
@click.option("--offset", type=click.IntRange(0), default=0, help="Start at this body character.")
@click.option("--max-chars", type=click.IntRange(1), help="Body characters to show [8000].")
@_json
def read(
    sources: tuple[str, ...],
    path: str,
    bundle_name: str | None,
    section: str | None,
    offset: int,
    max_chars: int | None,
    as_json: bool,
) -> None:
    """Read one concept: its header, then its body.

    The header gives provenance, trust and freshness. PATH may omit the leading
    slash and the .md; a folder path reads its index.md, or lists the
    folder when it has none.

    Example:

    \b
        okfx read examples/knowledge metrics/dock-availability --section Definition
    """
    box, bundle_name, path = _toolbox(sources, bundle_name, path)
    payload = box.read_concept(
        path=path, bundle=bundle_name, section=section, offset=offset, max_chars=max_chars
    )
    file = payload.get("error", {}).get("file")
    if file and not as_json and section is None:
        # A file of the bundle that is no concept (a README.md): say so, then show it.
        click.echo(render.cli_words(str(payload["error"]["message"])), err=True)
        shown = box.read_resource(path=file, bundle=bundle_name, offset=offset)
        if "error" not in shown:
            click.echo(render.resource(visible_data(shown)))
            sys.exit(1)  # no concept there: not_found, the exit status --json has (QA)
        _finish(shown, as_json, render.resource)
        return
    _finish(payload, as_json, render.concept)


@cli.command()
@_sources
@click.argument("query")
@_bundle_name
@click.option(
    "--limit", type=click.IntRange(1), default=10, show_default=True,
    help="Hits to show (at most 50; more reads as 50).",
)  # fmt: skip
@_filters
@_trust
@_semantic
@_json
def search(
    sources: tuple[str, ...],
    query: str,
    bundle_name: str | None,
    limit: int,
    type_: str | None,
    tags: tuple[str, ...],
    directory: str | None,
    include_deprecated: bool,
    trust_tier: str | None,
    exclude_stale: bool,
    semantic: bool,
    semantic_max: int,
    as_json: bool,
) -> None:
    """Rank concepts by relevance to QUERY.

    BM25F over title, tags, description and body, across every BUNDLE given (or one,
    with --bundle). Deprecated concepts are left out unless asked for.

    Example:

    \b
        okfx search examples/knowledge "dock availability" --limit 5 --tag stations
        okfx search examples/knowledge "kiosk went dark" --semantic
    """
    manager = _manager(sources)
    if semantic:
        with status("encoding concepts") as progress:
            _enable_semantic(manager, semantic_max, now=True, progress=progress.update)
    payload = Toolbox(manager, controls_as_is=True).search_concepts(
        query=query,
        bundle=bundle_name,
        limit=limit,
        type=type_,
        tags=list(tags) or None,
        directory=directory,
        trust_tier=trust_tier,
        include_deprecated=include_deprecated,
        include_stale=not exclude_stale,
    )
    _finish(payload, as_json, functools.partial(render.search, several=len(manager) > 1))


@cli.command()
@_sources
@click.argument("pattern")
@_bundle_name
@click.option("--regex", is_flag=True, help="PATTERN is an RE2 regular expression.")
@click.option("-i", "--ignore-case", is_flag=True, help="Match regardless of case.")
@click.option(
    "--limit", type=click.IntRange(1), default=50, show_default=True,
    help="Matches to show (at most 200; more reads as 200).",
)  # fmt: skip
@_filters
@_json
def grep(
    sources: tuple[str, ...],
    pattern: str,
    bundle_name: str | None,
    regex: bool,
    ignore_case: bool,
    limit: int,
    type_: str | None,
    tags: tuple[str, ...],
    directory: str | None,
    include_deprecated: bool,
    as_json: bool,
) -> None:
    """Find text or a regex in concepts, by line.

    PATTERN is plain text, or an RE2 regular expression with --regex.

    Example:

    \b
        okfx grep examples/knowledge "docks_available" -i
    """
    manager = _manager(sources)
    payload = Toolbox(manager, controls_as_is=True).grep_concepts(
        pattern=pattern,
        bundle=bundle_name,
        regex=regex,
        ignore_case=ignore_case,
        type=type_,
        tags=list(tags) or None,
        directory=directory,
        include_deprecated=include_deprecated,
        limit=limit,
    )
    _finish(payload, as_json, functools.partial(render.grep, several=len(manager) > 1))


@cli.command()
@_sources
@click.argument("path")
@_bundle_name
@click.option(
    "--limit", type=click.IntRange(1), default=100, show_default=True,
    help="Links of each list to show (at most 500; more reads as 500).",
)  # fmt: skip
@click.option("--offset", type=click.IntRange(0), default=0, show_default=True)
@_json
def neighbors(
    sources: tuple[str, ...],
    path: str,
    bundle_name: str | None,
    limit: int,
    offset: int,
    as_json: bool,
) -> None:
    """Show a concept's links and backlinks.

    What the concept at PATH links to, what links to it, and its unresolved links, a
    page of each list at a time.

    Example:

    \b
        okfx neighbors examples/knowledge metrics/dock-availability
    """
    box, bundle_name, path = _toolbox(sources, bundle_name, path)
    payload = box.get_neighbors(path=path, bundle=bundle_name, limit=limit, offset=offset)
    _finish(payload, as_json, render.neighbors)


@cli.command()
@_sources
@click.option(
    "--transport", type=click.Choice(["stdio", "http"]), default="stdio", show_default=True
)
@_listen(8765, "HTTP: ", "require 'Authorization: Bearer TOKEN' on every request")
@click.option(
    "--lazy-index", is_flag=True,
    help="Build the search index on the first search, not in the background at start.",
)  # fmt: skip
@executor_options
@click.option(
    "--workers", type=click.IntRange(1, 64), default=1, show_default=True,
    help="HTTP: serve from N processes that share the listening socket and the loaded "
    "state; SIGHUP reloads the bundles into new workers.",
)  # fmt: skip
@click.option(
    "--call-timeout", type=click.FloatRange(min=0, min_open=True), default=10.0,
    show_default=True, metavar="SECONDS",
    help="Time budget of one tool call, waiting for a turn included; past it the call "
    "answers a 'timeout' error.",
)  # fmt: skip
@click.option(
    "--web", is_flag=True,
    help="HTTP: also serve the viewer's pages (okfx view) beside /mcp; needs okfx[web].",
)  # fmt: skip
@click.option(
    "--watch", is_flag=True,
    help="Reload local bundles when their files change, and tell clients when the list "
    "of concepts changes (faster with the watch extra: docs/install.md).",
)  # fmt: skip
@click.option(
    "--refresh-interval", type=INTERVAL, metavar="SECONDS",
    help="Git bundles: this often, fetch again when the remote commit moved.",
)  # fmt: skip
@click.option(
    "--preload/--no-preload", default=None,
    help="Map the bundles' concept texts into each server process as it starts, "
    "rather than page by page as calls read them (page cache, shared by the workers). "
    "Default: on over HTTP, off for stdio.",
)  # fmt: skip
@_semantic
def serve(
    sources: tuple[str, ...],
    transport: str,
    host: str,
    port: int,
    token: str | None,
    lazy_index: bool,
    executor: str | None,
    data: tuple[str, ...],
    stale_policy: str,
    token_file: TextIO | None,
    workers: int,
    call_timeout: float,
    web: bool,
    watch: bool,
    refresh_interval: float | None,
    preload: bool | None,
    semantic: bool,
    semantic_max: int,
) -> None:
    """Serve the bundles as an MCP server.

    Needs the mcp extra (docs/install.md). stdio (the default) is for a
    client that starts okfx itself; stdout then carries only the protocol. http
    serves stateless streamable HTTP at /mcp, on 127.0.0.1 unless --host says
    otherwise, and prints the URL and a client config to stderr.

    With --executor duckdb and --data TABLE=FILE it also offers run_computation, which
    runs Attested Computations of that runtime over those files (nothing runs without).

    With --watch, local bundles are reloaded when their files change (only the
    changed files are parsed again), one line per reload goes to stderr, and
    clients are told when the list of concepts changes.

    Example:

    \b
        okfx serve examples/knowledge --transport http --port 8765
        okfx serve ./knowledge --watch
    """
    from okfx.adapters import mcp as adapter

    # Before loading anything: a server that cannot start should say so at once.
    need_extra("mcp", ("mcp", "uvicorn") if transport == "http" else ("mcp",), "okfx serve")
    if web:
        need_extra("web", _WEB_MODULES, "okfx serve --web")
    settings = executor_settings(executor, data, stale_policy)
    if _COMMAND_LINE:  # its own process: in a caller's (a test's), its logging is theirs
        _plain_log()

    if web and transport != "http":
        raise click.UsageError("--web serves the viewer over HTTP: add --transport http")
    typed = click.get_current_context().get_parameter_source("token") is ParameterSource.COMMANDLINE
    if transport != "http" and (token_file is not None or (token and typed)):
        # QA: accepted silently, so a user could think a stdio server was protected by it.
        # OKFX_TOKEN set in the environment stays allowed: one shell may start both kinds.
        raise click.UsageError(
            "--token and --token-file protect an HTTP server: add --transport http (a stdio "
            "server answers only the client that started it, and takes no token)"
        )
    order = _loader_order() if workers > 1 else None  # a loader of okfx serve --workers
    if transport == "http":
        token = order.token if order is not None else _require_token(host, token, token_file)
    if workers > 1:
        _check_workers(transport, settings.can_run)
        if watch or refresh_interval:
            raise click.UsageError(
                "--watch and --refresh-interval need one worker; with --workers N, "
                "send SIGHUP to the first process to reload the bundles"
            )
    # The bundles live as long as the server and hold no cycles: keep the cyclic GC from
    # walking them again and again (its first passes after a large load take seconds),
    # from the end of each load, index build or state read on.
    freeze_after_loads()
    limit_malloc_arenas(SERVER_ARENAS)  # before any thread: worker threads share heaps
    policy = adapter.CallPolicy(timeout=call_timeout)

    def load() -> tuple[KnowledgeManager, Any]:
        """The bundles loaded and indexed, and the MCP server over them."""
        manager = _manager(sources, serve_what_loads=True)
        manager.reloads = _reloads(watch or bool(refresh_interval), workers)
        for loaded in manager.bundles.values():
            if not len(loaded):  # served anyway, but an agent would find nothing: say why
                click.echo(
                    visible(
                        f"okfx: bundle {loaded.name!r} has 0 concepts: {_said(loaded)} "
                        f"(okfx validate {_loaded_as(loaded)} lists the problems)"
                    ),
                    err=True,
                )
        gc.freeze()
        if semantic:
            # numpy's BLAS on one thread: a server's calls share the cores (okfx.blas).
            blas.one_blas_thread()
            # One process: searches answer lexically (and say so) until the vectors are
            # ready. Workers: the vectors are built before the fork, so that all share them.
            _enable_semantic(
                manager, semantic_max, background=workers == 1, progress=_progress_line()
            )
        if workers > 1:  # built before the fork, so that the workers share it
            prepare(manager, index=not lazy_index or semantic, fork=True)
        elif not lazy_index or semantic:
            prepare_in_background(manager)
        try:
            server = adapter.build_server(Toolbox(manager, computations=settings), policy=policy)
        except ImportError as exc:
            raise click.ClickException(str(exc)) from exc
        return manager, server

    def http(mcp_server: Any, served: KnowledgeManager) -> Any:
        app = adapter.http_app(mcp_server, host=host, token=token)
        if not web:
            return app
        return webserve.beside_mcp(app, _viewer_app(served, host, token, workers == 1))

    def announce(manager: KnowledgeManager, url: str) -> None:
        # the token goes into the pasteable config only on a terminal, never into a log
        shown = token if token and sys.stderr.isatty() else "<OKFX_TOKEN>" if token else None
        click.echo(render.serve_banner(manager, url, shown), err=True)
        if web:
            click.echo(f"Viewer: {url.removesuffix(webserve.MCP_PATH)}/", err=True)

    if preload is None:
        preload = transport == "http"
    if workers > 1:
        _serve_workers(workers, order, host, port, token, (load, http, announce), preload)
        return
    manager, server = load()
    if preload:  # beside the index build, while the server starts answering
        threading.Thread(target=_preload, args=(manager,), name="okfx-preload", daemon=True).start()
    if settings.can_run:
        runtimes = ", ".join(settings.runtimes())
        tables = ", ".join(data)
        click.echo(f"okfx: run_computation runs {runtimes} computations over {tables}", err=True)
    if watch or refresh_interval:
        from okfx.tools.watch import Watcher

        _say_unwatched(manager)
        Watcher(
            manager,
            on_reload=adapter.watch_resources(server, manager),
            watch=watch,
            refresh_interval=refresh_interval,
            log=lambda line: click.echo(line, err=True),
        ).start()
    try:
        if transport == "stdio":
            _exit_on_interrupt()  # before the notice, which tells a person to press Ctrl+C
            if sys.stdin.isatty():  # a person, not an MCP client, started it
                click.echo(render.stdio_notice(manager), err=True)
            adapter.serve_stdio(server)
            return
        sock = _bind(adapter, host, port)
        announce(manager, adapter.url_for(sock))
        app = http(server, manager)
        try:
            adapter.serve_http(app, sock)
        finally:
            # uvicorn may swallow the Ctrl+C it handled or re-raise it: say so either way
            click.echo("okfx: stopped", err=True)
    except KeyboardInterrupt:  # Ctrl+C is how a server is stopped, not an error
        if transport == "stdio":
            click.echo("okfx: stopped", err=True)


def _preload(manager: KnowledgeManager) -> None:
    """``okfx serve --preload`` in this process (:mod:`okfx.tools.preload`)."""
    started = time.perf_counter()
    try:
        mapped = map_texts(manager)
    except (OSError, ValueError) as exc:  # only a head start: calls map what they read
        logging.getLogger("okfx").debug("okfx: mapping the concept texts failed: %s", exc)
        return
    logging.getLogger("okfx").debug(
        "okfx: mapped %.1f MB of concept texts in %.3f s",
        mapped / 2**20,
        time.perf_counter() - started,
    )


def _bind(adapter: Any, host: str, port: int) -> Any:
    try:
        return adapter.bind(host, port)
    except OSError as exc:
        raise click.ClickException(f"cannot listen on {host}:{port}: {exc}") from exc


def _loader_order() -> Any:
    from okfx.adapters.workers import LOADER, loader_order

    try:
        return loader_order()
    except (OSError, ValueError, KeyError) as exc:
        raise click.ClickException(f"{LOADER} is set but names no loader channel: {exc}") from exc


def _plain_log() -> None:
    """okfx's warnings as one plain line each on stderr, as its reload lines are: the MCP
    SDK gives the root logger a rich handler, which wrapped them at 80 columns (a path
    broken in two) under a dd/mm/yy time (watch-mode QA). Set once per process."""
    log = logging.getLogger("okfx")
    if any(getattr(h, "okfx_plain", False) for h in log.handlers):
        return
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(message)s"))
    handler.okfx_plain = True  # type: ignore[attr-defined]
    log.addHandler(handler)
    log.propagate = False
    if log.level == logging.NOTSET:
        log.setLevel(logging.WARNING)


def _serve_workers(
    workers: int,
    order: Any,
    host: str,
    port: int,
    token: str | None,
    steps: tuple[
        Callable[[], tuple[KnowledgeManager, Any]],
        Callable[[Any, KnowledgeManager], Any],
        Callable[[KnowledgeManager, str], None],
    ],
    preload: bool,
) -> None:
    """``okfx serve --workers N`` (:mod:`okfx.adapters.workers`). The socket is bound
    here, and each generation of workers is loaded by a process of its own, which prints
    the banner of the first. Started from the command line on Linux, this process then
    becomes a supervisor that imports nothing from okfx, and each loader is this command
    line run again with ``order`` (a :class:`~okfx.adapters.workers.LoaderOrder`): it
    loads, forks the workers and exits here."""
    from okfx.adapters import mcp as adapter
    from okfx.adapters import workers as pool

    load, http, announce = steps
    sock = order.sock if order is not None else _bind(adapter, host, port)
    url = adapter.url_for(sock)

    def generation(reason: str) -> Any:
        try:
            manager, server = load()
        except click.ClickException as exc:  # as click would show it, from this process
            exc.show()
            raise SystemExit(exc.exit_code) from exc
        except OKFError as exc:  # as the command would report it (_Command)
            _finish(error_payload(exc), False, render.error)
        if reason == pool.START:
            announce(manager, url)
        return http(server, manager), manager if preload else None

    def serve_one(served: tuple[Any, KnowledgeManager | None], worker_sock: Any) -> None:
        """A worker: map the texts (each process maps its own), then answer."""
        app, manager = served
        if manager is not None:
            _preload(manager)
        adapter.serve_http(app, worker_sock)

    if order is not None:
        pool.finish_loading(order, generation(order.reason), workers, serve_one)
    if _COMMAND_LINE and pool.can_adopt():
        pool.exec_supervisor([sys.executable, *sys.orig_argv[1:]], sock, workers, token)
    try:
        status = pool.serve_workers(generation, sock, workers, serve=serve_one, say=_say)
    finally:
        click.echo("okfx: stopped", err=True)
    if status:
        raise SystemExit(status)


@cli.group()
def cache() -> None:
    """Show or clear the state cache (parsed bundles and search indexes).

    It lives in the user cache folder (OKFX_CACHE_HOME, XDG_CACHE_HOME/okfx or
    the platform's), never in a bundle; --state-cache DIR or OKFX_STATE_CACHE=DIR
    move it. Clearing is always safe: the next load parses again.

    Example:

    \b
        okfx cache path
        okfx cache clear
    """


def _state_cache() -> Any:
    from okfx.statecache import StateCache, default_dir, resolve

    option = click.get_current_context().find_root().obj.get("state_cache")
    found = resolve(option)
    if found is not None:
        return found
    # off (docs QA: the default folder was printed, or cleared, as if in use)
    click.echo(
        "okfx: the state cache is off (--no-state-cache or OKFX_STATE_CACHE=off); this is "
        "the folder it uses when on",
        err=True,
    )
    return StateCache(default_dir())


@cache.command("path")
def cache_path() -> None:
    """Print the state cache folder (and how much it holds, and its bound, on stderr).

    Stderr also names the fetched sources' folder (git clones, archive extractions).

    Example:

    \b
        okfx cache path
        okfx --state-cache /tmp/okfx-state cache path
    """
    from okfx.cachebound import MAX_ENV, max_bytes

    state = _state_cache()
    files = state.files()
    size = sum(path.stat().st_size for path in files if path.exists())
    click.echo(str(state.directory))
    click.echo(
        f"{len(files)} files, {size / 2**20:.1f} MB; kept within {max_bytes() / 1000**3:g} GB "
        f"(set {MAX_ENV} to change it)",
        err=True,
    )
    # The fetched sources too, which nothing bounds (sources QA: they were not shown).
    from okfx.sources.cache import resolve_cache_dir, source_usage

    where = resolve_cache_dir(None)
    clones, archives, held = source_usage(where)
    click.echo(
        f"fetched sources: {where}: {clones} git clone(s), {archives} archive(s), "
        f"{held / 2**20:.1f} MB; not bounded: okfx cache clear --sources removes them",
        err=True,
    )


@cache.command("clear")
@click.option(
    "--sources", "fetched", is_flag=True,
    help="Also delete the git clones and archive extractions (the next load fetches or "
    "extracts again). Stop servers that read from them first.",
)  # fmt: skip
def cache_clear(fetched: bool) -> None:
    """Delete every state file (the next load of each bundle parses it again).

    Example:

    \b
        okfx cache clear
        okfx cache clear --sources
    """
    state = _state_cache()
    click.echo(f"removed {state.clear()} files from {state.directory}")
    if fetched:
        from okfx.sources.cache import resolve_cache_dir
        from okfx.sources.clear import clear_sources

        where = resolve_cache_dir(None)
        deleted, busy = clear_sources(where)
        held = f"; {busy} in use by a load, left" if busy else ""
        click.echo(f"removed {deleted} fetched sources from {where}{held}")


def _precompute(sources: Sequence[str], max_concepts: int) -> None:
    """``okfx index --semantic``: encode every bundle's concepts into the vector store."""
    for source in sources:
        bundle = _load(source)
        with status(f"encoding {bundle.name}", unit="texts") as progress:
            # off a terminal, a line per tenth (embeddings QA: 10 minutes of silence)
            report = progress.update if sys.stderr.isatty() else _progress_line()
            _enable_semantic(bundle, max_concepts, progress=report)
        vectors = bundle.semantic_state().vectors
        click.echo(
            f"{bundle.name}: {len(bundle):,} concept vectors ready ({vectors.encoded:,} "
            f"encoded, {len(bundle) - vectors.encoded:,} from the cache; model "
            f"{vectors.model_id})"
        )


def _prepare_index(sources: Sequence[str]) -> None:
    """``okfx index --prepare``: the search index over the bundles together, built (or
    found ready) and stored in the state cache (platform QA: no command did it, and a
    server over 124k concepts answered timeout for 2.5 min after every short session)."""
    manager = _manager(sources)
    started = time.monotonic()
    with status("building the search index"):
        manager.prepare_search()
    bundles = list(manager.bundles.values())
    concepts = sum(len(b) for b in bundles)
    where = (
        "kept in the state cache for servers over the same bundles"
        if all(b.state_cached for b in bundles)
        else "not kept: the state cache is off, so each server builds it again"
    )
    click.echo(
        f"search index over {concepts:,} concepts of {len(bundles)} "
        f"bundle{'s' if len(bundles) != 1 else ''} ready in "
        f"{time.monotonic() - started:.1f} s, {where}"
    )


def prepare(manager: KnowledgeManager, *, index: bool = True, fork: bool = False) -> None:
    """Build the listing facets and stamp, the "did you mean" name index, (with ``index``) the
    search index and grep's word index of every bundle now, and what a first call
    would build (:func:`okfx.tools.prewarm.prewarm`; ``fork``: workers are forked
    next)."""
    try:
        for bundle in manager.bundles.values():
            bundle.facets().prepare()  # a fraction of a second even at 100k
            pageversions.of_listing([bundle])  # list_concepts' version: 17 ms at 10k
            bundle.names()  # "did you mean" for a wrong path
            # before the index: a first get_neighbors took 2.6 s at 100k (platform QA)
            bundle.backlink_map()
        if index:
            manager.prepare_search()
            prepare_grep(list(manager.bundles.values()))  # about 2 s at 10k concepts
        prewarm(manager, search=index, fork=fork)  # what a first call builds, shared if forked
    except Exception:  # the first search builds it again and reports the problem
        logging.getLogger("okfx").exception("okfx: preparing facets or the index failed")


def prepare_in_background(manager: KnowledgeManager) -> threading.Thread:
    """:func:`prepare` in a daemon thread while the server starts answering: an agent's
    first call usually comes after a handshake and a turn of its model, and then finds
    them ready (or waits for the rest of the build, not all of it)."""
    thread = threading.Thread(target=prepare, args=(manager,), name="okfx-index", daemon=True)
    thread.start()
    return thread


def _require_token(host: str, token: str | None, token_file: TextIO | None) -> str | None:
    """The bearer token of an HTTP server okfx starts (from --token, OKFX_TOKEN or
    --token-file; one a client could send), and the token rule: off loopback, a token
    or no start."""
    from okfx.adapters import mcp as adapter

    token = _token(token, token_file, adapter.check_token)
    if not adapter.is_loopback(host) and not token:
        raise click.UsageError(
            f"refusing to serve on {host}: any address other than loopback needs a bearer "
            "token, so that no one else on the network can read the bundles. Set "
            "OKFX_TOKEN or pass --token-file FILE (- reads standard input); --token TOKEN "
            "works too, but any user can read it in ps. Make one with python -c 'import "
            "secrets; print(secrets.token_urlsafe(32))'."
        )
    return token


def _token(token: str | None, token_file: TextIO | None, check: Callable[[str], str]) -> str | None:
    """The token from --token, OKFX_TOKEN or --token-file, checked; a token typed on the
    command line gets a warning (any user can read it in ps)."""
    if token_file is not None:
        if token:
            raise click.UsageError("give the token once: --token (or OKFX_TOKEN) or --token-file")
        token = token_file.readline().strip("\r\n")
        token_file.close()
        where = f"--token-file {token_file.name}"
    elif token is None:
        return None
    else:
        source = click.get_current_context().get_parameter_source("token")
        where = "OKFX_TOKEN" if source is ParameterSource.ENVIRONMENT else "--token"
    try:
        check(token)
    except ValueError as exc:
        raise click.UsageError(f"{where}: {exc}") from None
    if where == "--token":
        click.echo(
            "okfx: warning: a token on the command line is visible to other users of this "
            "machine (ps); set OKFX_TOKEN or use --token-file instead",
            err=True,
        )
    return token


def _viewer_app(
    manager: KnowledgeManager, host: str, token: str | None, background: bool = True
) -> Any:
    try:
        return webserve.viewer(manager, host, token, background=background)
    except ImportError as exc:
        raise click.ClickException(str(exc)) from exc


@cli.command()
@_sources
@_listen(8766, "", "require this token (a browser signs in once at /login)")
@click.option("--open", "open_browser", is_flag=True, help="Open the viewer in a browser.")
@click.option(
    "--watch/--no-watch", default=True, show_default=True,
    help="Reload local bundles when their files change (faster with the watch extra: "
    "docs/install.md).",
)  # fmt: skip
@click.option(
    "--refresh-interval", type=INTERVAL, metavar="SECONDS",
    help="Git bundles: this often, fetch again when the remote commit moved.",
)  # fmt: skip
def view(
    sources: tuple[str, ...],
    host: str,
    port: int,
    token: str | None,
    token_file: TextIO | None,
    open_browser: bool,
    watch: bool,
    refresh_interval: float | None,
) -> None:
    """Browse, search and see the graph of bundles in a web browser.

    A local, read-only web app: an overview, a folder tree and filtered
    listing, each concept rendered with its provenance, trust and links, the
    link graph, search and grep, the load problems and the log. Needs the web
    extra (docs/install.md). Prints the URL to stderr. Local bundles are
    watched: a page shows an edit after its next load (--no-watch turns it off).

    Example:

    \b
        okfx view examples/knowledge --open
    """
    token = _require_token(host, token, token_file)
    from okfx.adapters import mcp as adapter

    need_extra("web", _WEB_MODULES, "okfx view")  # before loading: say at once what is missing
    freeze_after_loads()
    limit_malloc_arenas(SERVER_ARENAS)  # a server, as okfx serve
    manager = _manager(sources)
    manager.reloads = _reloads(watch or bool(refresh_interval), 1)
    gc.freeze()
    prepare_in_background(manager)
    app = _viewer_app(manager, host, token)
    if watch or refresh_interval:
        from okfx.tools.watch import Watcher

        _say_unwatched(manager)
        Watcher(
            manager,
            watch=watch,
            refresh_interval=refresh_interval,
            log=lambda line: click.echo(line, err=True),
        ).start()
    try:
        sock = adapter.bind(host, port)
    except OSError as exc:
        raise click.ClickException(f"cannot listen on {host}:{port}: {exc}") from exc
    url = adapter.url_for(sock).removesuffix(webserve.MCP_PATH) + "/"
    click.echo(webserve.viewer_banner(manager, url, bool(token)), err=True)
    if open_browser:
        import webbrowser
        from urllib.parse import quote

        webbrowser.open(f"{url}login?token={quote(token, safe='')}" if token else url)
    try:
        adapter.serve_http(app, sock)
    except KeyboardInterrupt:
        pass
    finally:
        click.echo("okfx: stopped", err=True)


def _exit_on_interrupt() -> None:
    """Make Ctrl+C (and a client's SIGINT) stop a stdio server at once.

    The MCP SDK reads stdin in a worker thread that nothing can wake: after a
    KeyboardInterrupt the process waited for that read for ever (a terminal never ends
    its input). Every answer is written and flushed as it is sent, so leaving without
    unwinding loses nothing."""
    import signal

    def stop(signum: int, frame: object) -> None:
        os._exit(128 + signum)

    # A parent that started us with SIGINT ignored (a background job, a client that
    # keeps its servers through its own Ctrl+C) keeps it ignored.
    if signal.getsignal(signal.SIGINT) is not signal.SIG_IGN:
        signal.signal(signal.SIGINT, stop)


def _check_workers(transport: str, runs: bool) -> None:
    from okfx.adapters.workers import can_fork

    if transport != "http":
        raise click.UsageError("--workers needs --transport http (a stdio server has one client)")
    if runs:  # a run's receipt is kept by the process that ran it
        raise click.UsageError(
            "--workers cannot be combined with --executor yet: check_attestation must reach "
            "the worker that ran the computation; serve computations with one worker"
        )
    if not can_fork():
        raise click.UsageError("--workers needs os.fork, which this platform lacks")


def _say(message: str) -> None:
    click.echo(message, err=True)


def _progress_line() -> Callable[[int, int], None]:
    """A progress callback that prints one stderr line per tenth of the work."""
    shown = [-1]

    def report(done: int, total: int) -> None:
        tenth = 10 * done // total if total else 10
        if tenth != shown[0]:
            shown[0] = tenth
            if not total:  # embeddings QA: "0/0 (ready)" read as no vectors at all
                click.echo("okfx: semantic vectors ready (every one read from the cache)", err=True)
                return
            ready = " (ready)" if done >= total else ""
            click.echo(f"okfx: semantic vectors encoded {done:,}/{total:,}{ready}", err=True)

    return report


#: Set by :func:`main`: this process runs the command line in ``sys.orig_argv`` (not a
#: test's runner), so ``okfx serve --workers`` may run it again in its loaders.
_COMMAND_LINE: list[bool] = []


def main() -> None:
    """Console-script entry point."""
    _COMMAND_LINE.append(True)
    cli(prog_name="okfx")
