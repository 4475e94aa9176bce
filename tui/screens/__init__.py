"""Provides the workbench's modal screens."""
