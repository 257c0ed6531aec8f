"""Search quality evaluation: queries over the OKF samples, metrics, and a BM25 baseline."""
