"""Fixtures of the dataset tests: a real Dask cluster (scheduler and two workers)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from .dask_helpers import Cluster, dask_cluster


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    """A scheduler and two workers shared by a module's tests."""
    with dask_cluster(2, tmp_path_factory.mktemp("dask") / "cluster.log") as running:
        yield running
