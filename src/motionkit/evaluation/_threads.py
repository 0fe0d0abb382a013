"""One BLAS thread for evaluation's thin products.

Every BLAS product evaluation makes is thin: ``(n, 3) @ (3, 3)`` to align positions, the
``(3, n) @ (n, 3)`` cross-covariance of Umeyama. OpenBLAS splits such a product over its
threads, which then spin-wait for each other: with its default two threads on two cores,
APE on 1M poses took 2.4× the time of one thread (``bench/eval.py`` records both). So the
public entry points run under a one-thread BLAS limit (``threadpoolctl``), restored on
return; the numbers do not change (OpenBLAS splits these products over rows and columns,
never over the summed dimension: the tests compare both settings bit for bit).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import ParamSpec, TypeVar

_P = ParamSpec("_P")
_R = TypeVar("_R")
#: The threadpoolctl controller, made once (it lists the loaded libraries, ~1 ms).
_controller: list[object] = []


@contextmanager
def one_blas_thread() -> Iterator[None]:
    """BLAS limited to one thread inside; the earlier limits are restored on the way out
    (nested uses restore the outer one's)."""
    from threadpoolctl import ThreadpoolController

    if not _controller:
        _controller.append(ThreadpoolController())
    controller = _controller[0]
    assert isinstance(controller, ThreadpoolController)
    with controller.limit(limits=1, user_api="blas"):
        yield


def single_blas(func: Callable[_P, _R]) -> Callable[_P, _R]:
    """``func`` run under :func:`one_blas_thread`."""
    @functools.wraps(func)
    def wrapper(*args: _P.args, **kwargs: _P.kwargs) -> _R:
        with one_blas_thread():
            return func(*args, **kwargs)
    return wrapper
