"""The Python-flow examples: ``[tarry] app = "shop:app"`` names the App below.

Importing the package imports every flow module, so each flow is registered on the app.
"""

from shop import approvals, fanout, orders
from shop.app import app

__all__ = ["app", "approvals", "fanout", "orders"]
