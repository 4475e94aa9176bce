"""Provides ``chimera serve``: the workbench in a browser, each tab a workbench process of its own.

``options`` declares the command's arguments (light: ``chimera --help`` imports nothing more), ``command``
checks them and runs the server, ``web`` is the server (the page, the token, the websocket of each tab) and
``tabs`` the workbench processes it starts and ends. The browser's side (xterm.js and Textual's protocol
client) and the terminal's fonts come from the ``textual-serve`` package.
"""
