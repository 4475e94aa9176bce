"""Provides the workbench's parts: each an object the app holds, with its own keys and the ``Session`` it acts
through (the conversation, the runs, the answers to questions, the input, the commands, the sessions and the
session's tree), and the written model of where the focus may be (``focus``)."""
