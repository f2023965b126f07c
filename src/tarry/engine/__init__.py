"""The engine: the interpreter that advances runs, the actions, and the worker."""
