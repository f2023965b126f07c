"""The App of the examples. Flow modules import it and register their flows on it."""

from tarry import App

app = App()
