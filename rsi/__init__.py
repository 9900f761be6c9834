"""Recursive harness improvement: diagnosis, exam planning, editing, gates and the repair archive."""
