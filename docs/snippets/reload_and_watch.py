"""Reload a bundle after an edit, then watch it (docs/state.md)."""

import shutil
import tempfile
from pathlib import Path

from okfx import Bundle, KnowledgeManager
from okfx.tools.watch import Watcher

folder = Path(tempfile.mkdtemp()) / "knowledge"
shutil.copytree("examples/knowledge", folder)

bundle = Bundle.load(folder)  # parsed once; the next load reads the state cache
page = folder / "metrics" / "dock-availability.md"
page.write_text(page.read_text().replace("Dock availability", "Dock capacity", 1))
bundle = bundle.reload()  # parses only the file that changed
print(bundle.changes.summary() if bundle.changes else "nothing changed")
print(bundle.concept("/metrics/dock-availability").title)

manager = KnowledgeManager([bundle])
watcher = Watcher(manager, on_reload=lambda report: print(report.line()), polling=True)
(folder / "metrics" / "new-metric.md").write_text("---\ntype: metric\n---\nNew.\n")
watcher.reload_now()  # what the watcher does after each burst of changes
print(len(manager.bundle(bundle.name)))
