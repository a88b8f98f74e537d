"""Compiled ("crate") sensors written in Python, registered through the attend.sensors entry points."""
