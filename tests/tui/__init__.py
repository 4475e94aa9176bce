"""Tests of the workbench: under Textual's Pilot, in a real terminal (tmux), as screen snapshots, and its
state reducer, conversation view and highlighting."""
