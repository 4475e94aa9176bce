"""Permissions: the policy (modes and rules) and the shell-aware reading of commands it rests on."""
