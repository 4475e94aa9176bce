"""A session: the live handle front ends drive, and how one is started from options."""
