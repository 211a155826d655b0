"""Figures of Results: the standard figure of each benchmark, memory kinds
side by side, and model overlays, drawn with Matplotlib's object API."""
