"""``tarry serve``: the HTTP API, the dashboard, health and metrics, and a worker, in one
process (SPEC 8.2, 8.3). The app is built by :func:`tarry.server.app.create_app`."""
