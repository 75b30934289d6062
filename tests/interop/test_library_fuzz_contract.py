"""The library adapters' fuzz contract checks itself (tests/support/fuzz_contract.py): an invalid value, an unnamed
error and an escaping warning each fail it; valid values and named errors pass."""

import warnings

import pytest

from dpaudit.interop.library import LibraryClaim
from tests.support.fuzz_contract import check_call


def test_contract_rejects_invalid_values():
    class Bad:
        def epsilon(self, d):
            return -0.5

        def delta(self, e):
            return 0.1

    with pytest.raises(AssertionError):
        check_call(lambda: Bad(), ("x",))
    with pytest.raises(AssertionError):
        check_call(lambda: (_ for _ in ()).throw(TypeError("'float' object is not iterable")), ("events",))
    with pytest.raises(RuntimeWarning):  # a warning escaping is a failure
        check_call(lambda: warnings.warn("boo", RuntimeWarning, stacklevel=2) or LibraryClaim.pure(1.0), ("x",))
    assert isinstance(check_call(lambda: LibraryClaim.pure(1.0), ("x",)), LibraryClaim)
    assert isinstance(check_call(lambda: LibraryClaim.pure(-1.0), ("epsilon",)), ValueError)
