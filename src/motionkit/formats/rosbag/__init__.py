"""ROS1 and ROS2 bags (and MCAP files) through rosbags: poses, TF chains through our own
buffer, JointState (with our own decoder), Imu and numeric topics."""
