"""One adapter per system (see _kit.py for the protocol); each runs in its own environment."""
