"""Tests of the tarry command line."""
