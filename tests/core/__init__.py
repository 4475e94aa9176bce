"""Tests of the engine in process: the loop and its strategies, tools, permissions, providers, sessions and
checkpoints (a few also run `chimera run` to see the same from outside)."""
