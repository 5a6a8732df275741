"""Django's ASGI handler, with a request's middleware and view run in one go on its thread.

Django's own handler builds the middleware chain for an event loop: every middleware that
can run either way (all of Django's) runs as a coroutine, and calls each of its sync hooks
(``process_request``, ``process_view``, ``process_response``) through ``sync_to_async`` — a
trip from the loop to the request's thread and back, each with its wake-ups and hand-overs of
the interpreter lock; a sync-only middleware between them turns the chain back the other way
(``async_to_sync``). With this project's eleven middlewares and a sync view, one request made
about twenty such trips (a one-span OTLP export: ~27 turns of the event loop).

Here the chain is built as for WSGI — sync from the first middleware to the view — and called
once through ``sync_to_async``: one trip a request, on the thread Django gives each request
(``ThreadSensitiveContext``). An async view still works: Django's sync path runs it on the
event loop with ``async_to_sync`` (one trip more, for that view only). The request's body,
the response's streaming and the request-finished signal are the stock handler's.
"""

from __future__ import annotations

from asgiref.sync import sync_to_async
from django.core.handlers.asgi import ASGIHandler


class OneTripASGIHandler(ASGIHandler):
    def load_middleware(self, is_async: bool = False) -> None:
        super().load_middleware(is_async=False)
        # Set just now by load_middleware; the type hints Django is checked with omit it.
        chain = self._middleware_chain  # type: ignore[has-type]
        self._middleware_chain = sync_to_async(chain, thread_sensitive=True)


def one_trip_asgi_application() -> OneTripASGIHandler:
    """Django set up, and its ASGI application (as ``get_asgi_application``)."""
    import django

    django.setup(set_prefix=False)
    return OneTripASGIHandler()
