"""Triggers: the ``on:`` of a flow, which starts runs from events and schedules.

- ``starts``: which runs a trigger starts, and with what inputs (pure);
- ``schedule``: when a schedule trigger fires, and what to create after a gap (pure);
- ``describe``: one document per trigger for the CLI, the API and the dashboard.
"""
