"""fpgacomm: measure and model communication between accelerators."""
