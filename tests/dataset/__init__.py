"""Dataset tests: batch jobs on Dask, the catalog, packed libraries."""
