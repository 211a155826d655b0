"""The fabric simulator from Python: preset fabrics of the papers (fabric),
gather schedules run on them (gather), and the estimate of events and memory
checked before any simulation is built (resources)."""
