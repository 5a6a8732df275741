"""Small agents that run anywhere.

Try one: ``python -m runtime chat runtime.examples.capital --trace``.
"""
