"""The agent tools from Python: one Toolbox, whose methods every adapter exposes."""

from pathlib import Path

from okfx import Bundle, KnowledgeManager, Toolbox

KNOWLEDGE = Path(__file__).resolve().parents[2] / "examples" / "knowledge"  # your bundle here

box = Toolbox(Bundle.load(KNOWLEDGE))  # or Toolbox(KnowledgeManager.from_paths([...]))
result = box.read_concept(path="/metrics/dock-availability.md")  # a JSON-able dict
print(result["title"], result["trust_tier"])
print(box.read_concept(path="/metrics/nope.md")["error"]["code"])  # never an exception
print(isinstance(box.manager, KnowledgeManager))
