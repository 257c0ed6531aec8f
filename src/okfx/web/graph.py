"""The link graph as the Graph page draws it: a bounded neighbourhood, or a whole bundle
small enough to draw.

Nodes are concepts (plus the document the neighbourhood starts from); an edge is a link
between two drawn nodes, whichever way round it was found. Positions are computed here,
deterministically (rings by distance for a neighbourhood, a sunflower spiral grouped by
type for a whole bundle), so the page is a complete SVG without script; ``graph.js``
then relaxes the layout in the browser. Both views are bounded: a neighbourhood stops at
:data:`MAX_NODES`, and a bundle over :data:`WHOLE_LIMIT` concepts is not drawn whole.
"""

from __future__ import annotations

import math
from collections import Counter, deque
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime

from okfx.model import Concept, IndexFile, LogFile
from okfx.web import urls
from okfx.web.site import BundleView

__all__ = ["MAX_NODES", "WHOLE_LIMIT", "Graph", "colours", "neighbourhood", "whole"]

MAX_NODES = 120
WHOLE_LIMIT = 400
MAX_EDGES = 3000
PALETTE = 10
RING = 170.0
GOLDEN = math.pi * (3 - math.sqrt(5))


@dataclass(frozen=True, slots=True)
class Node:
    path: str
    title: str
    type: str
    status: str
    stale: bool
    depth: int
    colour: str
    url: str
    x: float
    y: float


@dataclass(frozen=True, slots=True)
class Graph:
    nodes: list[Node]
    #: ``(from, to, via)``: node indexes, and the fields the links come from ("body",
    #: "related", ...), so the page draws each edge's direction and names its kind.
    edges: list[tuple[int, int, str]]
    truncated: bool  # more nodes were reachable than drawn
    legend: list[tuple[str, str]]  # (type, colour class) for the types drawn
    box: tuple[float, float, float, float]  # the SVG viewBox


def colours(view: BundleView, drawn: Iterable[str] = ()) -> dict[str, str]:
    """A colour class per type: the bundle's most common types keep one colour in every
    graph; the colours of those a graph does not draw go to the other types it draws
    (``drawn``: its concepts' types), the most drawn first, so a graph of ten kinds or
    fewer has no grey concept (viewer QA: five Architecture pages drawn grey, as the
    folders beside them, since Architecture is not among the bundle's ten commonest)."""
    ranked = [name for name, _ in view.counts["type"].most_common(PALETTE)]
    palette = {name: f"c{i}" for i, name in enumerate(ranked)}
    counts = Counter(drawn)
    free = [palette[name] for name in ranked if name not in counts]
    others = sorted((n for n in counts if n not in palette), key=lambda n: (-counts[n], n))
    palette.update(zip(others, free, strict=False))
    return palette


def _adjacent(view: BundleView, path: str) -> list[str]:
    """Documents linked from or to ``path`` (concepts, the index and log files a root
    index lists its folders by, and those that list it), in a stable order (outbound
    first)."""
    b = view.bundle
    around = b.neighbors(path)
    out: dict[str, None] = {}
    for link in around.outbound:
        if isinstance(b.get(link.target), Concept | IndexFile | LogFile):
            out[link.target] = None
    for link in around.backlinks:
        out[link.source] = None
    # The index and log files that list it: the index's graph drew the edge, the
    # concept's left it out (viewer QA).
    for source in b.listed_in(path):
        out[source] = None
    out.pop(path, None)
    return list(out)


def _finish(
    view: BundleView,
    placed: list[tuple[str, int, float, float]],
    truncated: bool,
    now: datetime,
) -> Graph:
    b = view.bundle
    types = [doc.type for doc in map(b.get, (p for p, *_ in placed)) if isinstance(doc, Concept)]
    palette = colours(view, types)
    index = {path: at for at, (path, *_rest) in enumerate(placed)}
    nodes: list[Node] = []
    edges: dict[tuple[int, int], dict[str, None]] = {}  # each edge's fields, in link order
    for path, depth, x, y in placed:
        doc = b.get(path)
        if isinstance(doc, Concept):
            node = Node(
                path, doc.title, doc.type, doc.status, doc.is_stale(now), depth,
                palette.get(doc.type, "c-other"), urls.concept(b.name, path), x, y,
            )  # fmt: skip
        else:
            node = Node(path, _label(path), _kind(doc), "", False, depth, "c-page",
                        urls.concept(b.name, path), x, y)  # fmt: skip
        capped = isinstance(doc, Concept)  # a reserved file's few links are all drawn
        for link in doc.links if doc is not None else ():
            other = index.get(link.target)
            if other is None or other == index[path]:
                continue
            key = (index[path], other)
            if key in edges or not capped or len(edges) < MAX_EDGES:
                edges.setdefault(key, {})[link.field] = None
        nodes.append(node)
    seen = {n.type for n in nodes}
    legend = [(kind, cls) for kind, cls in palette.items() if kind in seen]
    if any(n.colour == "c-other" for n in nodes):
        legend.append(("other", "c-other"))
    if any(n.colour == "c-page" for n in nodes):  # an index, a log, a folder: no concept
        legend.append(("index, log or folder", "c-page"))
    xs = [n.x for n in nodes] or [0.0]
    ys = [n.y for n in nodes] or [0.0]
    pad = 90.0
    box = (min(xs) - pad, min(ys) - pad, max(xs) - min(xs) + 2 * pad, max(ys) - min(ys) + 2 * pad)
    drawn = [(s, t, ", ".join(fields)) for (s, t), fields in sorted(edges.items())]
    return Graph(nodes, drawn, truncated, legend, box)


def _label(path: str) -> str:
    """A reserved file's label: its folder for an index (``tables/``, the root's
    ``index``), ``log`` after its folder for a log; a file's name otherwise."""
    folder, _, name = path.rpartition("/")
    if name in ("index.md", "log.md"):
        where = folder.rsplit("/", 1)[-1]
        if name == "index.md":
            return f"{where}/" if where else "index"
        return f"{where}/log" if where else "log"
    return name


def _kind(doc: object) -> str:
    return "index" if isinstance(doc, IndexFile) else "log" if isinstance(doc, LogFile) else "file"


def neighbourhood(view: BundleView, path: str, depth: int, now: datetime) -> Graph:
    """The documents within ``depth`` (1 or 2) links of ``path``, at most
    :data:`MAX_NODES` of them, on rings around it."""
    depth = min(max(depth, 1), 2)
    rings: list[list[str]] = [[path]]
    seen = {path}
    truncated = False
    queue = deque([(path, 0)])
    while queue:
        current, at = queue.popleft()
        if at == depth:
            continue
        for other in _adjacent(view, current):
            if other in seen:
                continue
            if len(seen) >= MAX_NODES:
                truncated = True
                break
            seen.add(other)
            while len(rings) <= at + 1:
                rings.append([])
            rings[at + 1].append(other)
            queue.append((other, at + 1))
    placed: list[tuple[str, int, float, float]] = [(path, 0, 0.0, 0.0)]
    for level, ring in enumerate(rings[1:], start=1):
        radius = RING * level * max(1.0, len(ring) / (14.0 * level))
        for i, other in enumerate(ring):
            angle = 2 * math.pi * i / len(ring) - math.pi / 2 + (level - 1) * 0.3
            placed.append((other, level, radius * math.cos(angle), radius * math.sin(angle)))
    return _finish(view, placed, truncated, now)


def whole(view: BundleView, now: datetime) -> Graph | None:
    """Every concept of the bundle, grouped by type on a spiral; None over
    :data:`WHOLE_LIMIT` concepts."""
    if len(view.bundle) > WHOLE_LIMIT:
        return None
    ordered = sorted(view.bundle, key=lambda c: (c.type.casefold(), c.path))
    spacing = 46.0
    placed = [
        (
            c.path,
            1,
            spacing * math.sqrt(i + 0.5) * math.cos(i * GOLDEN),
            spacing * math.sqrt(i + 0.5) * math.sin(i * GOLDEN),
        )
        for i, c in enumerate(ordered)
    ]
    return _finish(view, placed, False, now)
