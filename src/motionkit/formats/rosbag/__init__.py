"""ROS1 and ROS2 bags (and MCAP files) through rosbags, with our own TF buffer."""
