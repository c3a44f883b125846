"""Reflection (SPEC §7): a session diary read from its watermark, the reflectors that propose
deltas, and what one reflection did."""
