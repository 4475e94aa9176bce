"""Provides model providers: the protocol, the Anthropic Messages API client and replay.

Import the concrete modules directly; this package does not import the
``anthropic`` SDK, so importing it stays cheap.
"""
