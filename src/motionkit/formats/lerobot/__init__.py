"""LeRobot v3.0 datasets (a folder of Parquet files and JSON metadata), as lerobot 0.6.1
writes and reads them: one Motion per episode."""
