"""HDF5 episode files of robot learning: robomimic and Isaac Lab recorder layouts (h5py)."""
