"""Tests of the `chimera` command end to end: run, resume, switch, replay and the session commands as a person
or a script runs them (a subprocess, or its ``main`` in process), against the loopback Messages API."""
