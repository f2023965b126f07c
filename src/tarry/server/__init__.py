"""``tarry serve``: the HTTP API, the dashboard, health and metrics, and a worker, in one
process. The app is built by :func:`tarry.server.app.create_app`."""
