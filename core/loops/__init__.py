"""The agent's loop: the step, the strategies built from it, and the conversation they share."""
