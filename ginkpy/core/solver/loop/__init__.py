"""The solve loop shared by every iterative solver: IterationMonitor (monitor.py) runs the
iterations a solver hands it, StopReader (stop_reader.py) reads the device stop state, Replays
(replays.py) keeps the captured parts of an iteration, scaling.py scales far-off systems."""
