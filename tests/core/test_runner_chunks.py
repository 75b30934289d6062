"""dpaudit.core.runner: chunked trials give the same draws in process and on a thread pool."""

from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

from dpaudit.core.runner import chunk_sizes, concat_chunks, run_chunks


# ------------------------------------------------------------------ runner and results
def test_run_chunks_deterministic_across_executors():
    def fn(size, ss):
        return np.random.default_rng(ss).standard_normal(size)

    a = concat_chunks(run_chunks(fn, 2500, 11, 1000))
    with ThreadPoolExecutor(2) as ex:
        b = concat_chunks(run_chunks(fn, 2500, 11, 1000, executor=ex))
    assert np.array_equal(a, b) and a.shape == (2500,)
    assert chunk_sizes(2500, 1000) == [1000, 1000, 500]
    assert not np.array_equal(a, concat_chunks(run_chunks(fn, 2500, 12, 1000)))
    with pytest.raises(ValueError, match="seed"):
        run_chunks(fn, 10, -1, 5)
