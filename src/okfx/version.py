"""The okfx version and where okfx is installed from, in a module of its own so every
layer can name them without importing the package's public face (which imports every
layer)."""

__version__ = "0.1.0"

#: The repository okfx is installed from until it is published on PyPI. ``OWNER`` is a
#: placeholder: there is no public repository yet (docs/install.md says so).
REPOSITORY = "https://github.com/OWNER/okfx"


def install_command(extra: str | None = None) -> str:
    """The pip command that installs okfx (with ``extra``), as docs/install.md gives it."""
    name = f"okfx[{extra}]" if extra else "okfx"
    checkout = f'pip install -e ".[{extra}]"' if extra else "pip install -e ."
    # The command that runs as printed first (framework QA: the URL's OWNER placeholder
    # was given as the command to run).
    return (
        f'{checkout} in a checkout of okfx, or pip install "{name} @ git+{REPOSITORY}" '
        "(OWNER: the account that hosts okfx; docs/install.md)"
    )
