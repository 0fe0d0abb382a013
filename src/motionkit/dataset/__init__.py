"""Work on whole datasets: batch jobs (local processes, Dask or Ray), a catalog of files,
packed motion libraries.

Heavy modules (dask, polars) load only when a function that needs them runs, so importing
this package costs nothing.
"""

from __future__ import annotations

from .batch import Outcome, catalog, run_batch
from .catalog import read_file, write_catalog
from .files import Item, expand
from .pack import check_pack, open_pack, pack, write_pack

__all__ = [
    "Item",
    "Outcome",
    "catalog",
    "check_pack",
    "expand",
    "open_pack",
    "pack",
    "read_file",
    "run_batch",
    "write_catalog",
    "write_pack",
]
