"""Loading bundles from a folder, git and an archive (paths relative to the working folder)."""

from okfx import Bundle
from okfx.sources import GitSource

Bundle.load("examples/knowledge")  # a folder, read in place
Bundle.load("https://github.com/org/repo/tree/main/okf/sales")  # branch main, subdir okf/sales
Bundle.from_git("git@github.com:org/repo.git", ref="v2", subdir="okf")
Bundle.load(GitSource("file:///srv/git/kb.git", ref="release"))
Bundle.load("exports/kb.tar.gz")  # or .zip .tar .tgz .tar.xz
Bundle.load("exports/kb-main.zip#okf/sales")  # a folder in an archive
