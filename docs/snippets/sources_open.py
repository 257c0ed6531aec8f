"""Reading a source without parsing it: the folder, and the entry's lock while it is read."""

from okfx.sources import SourceLimits, open_source

with open_source("kb.zip", cache_dir="cache", limits=SourceLimits(max_files=5_000)) as (root, name):
    print(name, sorted(p.name for p in root.iterdir()))  # the lock is held until here
