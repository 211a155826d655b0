"""Calibration and prediction of the user's own cluster: a campaign measured on
a few ranks (campaign), a platform fitted to it (fit), predictions at any rank
count with their intervals (predict). docs/PREDICTION.md has the method."""
