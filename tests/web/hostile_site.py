"""A bundle written to attack its viewer, and a secret beside it that must never leak.

Every payload tries to set ``window.__okfx_pwned`` (or to fetch the secret); the browser
tests assert the flag stays unset, that no console error appears, and that no answer
ever carries :data:`SECRET`.
"""

from __future__ import annotations

import os
from pathlib import Path

from conftest import write_tree

FLAG = "__okfx_pwned"
SECRET = "TOP-SECRET-OUTSIDE-THE-BUNDLE-7f3a"
SET = f"window.{FLAG}=1"
BIG_BODY_BYTES = 5 * 1024 * 1024

CONCEPT = f"""---
type: "<script>{SET}</script>Metric"
title: "<img src=x onerror={SET}> Evil title"
description: "\\"><svg onload={SET}></svg>"
tags: ["<b onmouseover={SET}>tag</b>", "ok"]
status: stable
stale_after: 2020-01-01T00:00:00Z
sources:
  - resource: "javascript:{SET}"
    title: "<script>{SET}</script>"
  - resource: evil.html
verified:
  - by: "human:<script>{SET}</script>"
    at: 2026-01-01T00:00:00Z
---
# Heading <script>{SET}</script>

<script>{SET}</script>

<img src=x onerror="{SET}">

<iframe src="evil.html"></iframe>

[js link](javascript:{SET}) [JS](JaVaScRiPt:{SET}) [tab](java\tscript:{SET})
[data](data:text/html,<script>{SET}</script>) [vb](vbscript:msgbox(1))
![img js](javascript:{SET}) ![img data](data:image/svg+xml,<svg onload="{SET}">)
[the html attachment](evil.html) and ![the svg attachment](evil.svg) and [svg link](evil.svg)
[escape](../../../../etc/passwd) [escape2](/../secret.txt) [escape3](%2e%2e/secret.txt)
[outside by symlink](leak.txt) [a friend](friend.md)
<a href="javascript:{SET}">raw anchor</a>

[ref]: javascript:{SET}
Reference link: [ref]

| a | b |
|---|---|
| <script>{SET}</script> | [x](javascript:{SET}) |
"""

FRIEND = f"""---
type: Reference
title: Friend
---
Back to [the evil one](evil-concept.md). `<script>{SET}</script>` in code.

```html
<script>{SET}</script>
```
"""

LOG = f"""# Log
## 2026-01-02
* <script>{SET}</script> [link](javascript:{SET}) and [evil](evil-concept.md)
"""

EVIL_HTML = f"""<!doctype html><html><body>
<script>{SET}; try {{ window.parent.{FLAG} = 1; window.top.{FLAG} = 1 }} catch (e) {{}}</script>
<img src=x onerror="{SET}"></body></html>
"""

EVIL_SVG = f"""<svg xmlns="http://www.w3.org/2000/svg" onload="{SET}">
<script>{SET}; try {{ window.top.{FLAG} = 1 }} catch (e) {{}}</script>
<circle r="5"/></svg>
"""


def build(root: Path) -> Path:
    """Write the hostile bundle at ``root / 'hostile'`` and the secret beside it."""
    bundle = root / "hostile"
    (root / "secret.txt").write_text(SECRET, encoding="utf-8")
    big = "---\ntype: Reference\ntitle: Big\n---\n" + (
        "A long line of text that repeats to make the body large. " * 16 + "\n"
    ) * (BIG_BODY_BYTES // 1000)
    write_tree(
        bundle,
        {
            "index.md": "---\nokf_version: '0.2'\n---\n# Hostile\n* [evil](evil-concept.md)\n",
            "evil-concept.md": CONCEPT,
            "friend.md": FRIEND,
            "big.md": big,
            # A body table wider than a phone: long unbroken cells, many columns.
            "wide.md": "---\ntype: Reference\ntitle: Wide\n---\n"
            + "| "
            + " | ".join(f"column_{i}_" + "x" * 40 for i in range(8))
            + " |\n"
            + "|"
            + "---|" * 8
            + "\n"
            + "| "
            + " | ".join("value_" + "y" * 60 for _ in range(8))
            + " |\n",
            "log.md": LOG,
            "evil.html": EVIL_HTML,
            "evil.svg": EVIL_SVG,
        },
    )
    os.symlink(root / "secret.txt", bundle / "leak.txt")
    return bundle
