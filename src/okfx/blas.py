"""One BLAS thread per server process (``okfx serve --semantic``).

numpy's BLAS (OpenBLAS in numpy's wheels, MKL in some other builds) runs a large matrix
product on every core, and its threads spin for a while after it. For one agent that buys
a millisecond or two; for a server answering many agents at once it burns CPU the other
calls need. Measured with ``bench/serve_load.py --serve-arg=--semantic`` (10k generated
bundle, 50 clients, one worker, 30 s, two runs each, interleaved), when the query's
similarity to every concept vector was such a product: 203 and 183 calls/s at 8.6 and 9.4
ms of server CPU a call with the default, 234 and 253 calls/s at 5.2 and 4.9 ms with one
thread, p99 531/579 against 489/444 ms. That product no longer runs on BLAS
(:func:`okfx.search.vectors.products`); the server still asks for one thread, so that
any other BLAS product in its process (a plug-in embedder's, say) does not spin either.

The thread count is read from the environment when the library loads, so
:func:`one_blas_thread` must run before numpy is imported; a value the user set wins.
"""

from __future__ import annotations

import os
import sys
from collections.abc import MutableMapping

__all__ = ["BLAS_THREAD_VARIABLES", "one_blas_thread"]

#: The variables the BLAS libraries numpy is built with read their thread count from
#: (OpenBLAS also reads ``OMP_NUM_THREADS`` when its own is unset).
BLAS_THREAD_VARIABLES = ("OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")
_CHOSEN = (*BLAS_THREAD_VARIABLES, "OMP_NUM_THREADS")


def one_blas_thread(environ: MutableMapping[str, str] | None = None) -> bool:
    """Ask numpy's BLAS for one thread, unless the user set a thread count (any of
    :data:`BLAS_THREAD_VARIABLES` or ``OMP_NUM_THREADS``) or numpy is loaded already
    (too late to change it). True when set; ``environ`` defaults to ``os.environ``."""
    env = os.environ if environ is None else environ
    if any(env.get(name) for name in _CHOSEN) or "numpy" in sys.modules:
        return False
    for name in BLAS_THREAD_VARIABLES:
        env[name] = "1"
    return True
