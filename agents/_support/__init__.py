"""Chores shared by the agents and scripts: atomic files and JSON lines, progress bars, figures, CLI helpers."""
