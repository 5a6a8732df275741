"""The ASGI application daphne serves: Django for HTTP, Channels consumers for websockets."""

import os

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "agentdash.settings")

from agentdash.core.asgi_handler import one_trip_asgi_application

# Django's handler, with each request's middleware and view in one trip to its thread.
django_asgi_app = one_trip_asgi_application()

from channels.auth import AuthMiddlewareStack  # noqa: E402
from channels.routing import ProtocolTypeRouter, URLRouter  # noqa: E402
from channels.security.websocket import AllowedHostsOriginValidator  # noqa: E402
from django.conf import settings  # noqa: E402

import agentdash.celery_app  # noqa: E402, F401  (runs submitted from here go to its broker)
from agentdash.core.conf import agentdash_setting  # noqa: E402
from agentdash.core.gc_tuning import gc_tune  # noqa: E402
from agentdash.core.static_serving import StaticFiles  # noqa: E402
from agentdash.http_limits import http_limits_apply  # noqa: E402
from agentdash.ingest.grpc_server import grpc_serve_here  # noqa: E402
from agentdash.live.daphne_limits import daphne_limits_apply  # noqa: E402
from agentdash.live.outage_guard import SocketOutageGuard  # noqa: E402
from agentdash.routing import websocket_urlpatterns  # noqa: E402
from agentdash.runs.asgi_start import RunHostStarter  # noqa: E402

# Oversized websocket messages are refused with a close frame (1009), not a dropped connection;
# oversized request bodies and lines with 413/414/431 before they are read.
daphne_limits_apply()
http_limits_apply()

# In development daphne serves /static/ itself, as runserver does, but on its event loop
# (agentdash/core/static_serving.py); in production a web server (or whitenoise) does.
http_app = StaticFiles(django_asgi_app, settings.STATIC_URL) if settings.DEBUG else django_asgi_app

# Websockets: only from allowed origins (agentdash.E005), authenticated by the session cookie.
# The first request of any kind starts this process's run host (daphne has no lifespan).
router = ProtocolTypeRouter(
    {
        "http": http_app,
        "websocket": AllowedHostsOriginValidator(
            # types-channels' URLRouter takes only its own _ExtendedURLPattern, which nothing makes.
            SocketOutageGuard(AuthMiddlewareStack(URLRouter(websocket_urlpatterns)))  # type: ignore[arg-type]
        ),
    }
)
application = RunHostStarter(router)

# OTLP/gRPC beside HTTP, from this process (AGENTDASH_OTLP_GRPC; docs/INGEST.md): spans it
# stores reach this process's sockets as HTTP-ingested ones do.
grpc_serve_here()

# Start-up is done: what it made lives as long as the process (agentdash/core/gc_tuning.py).
gc_tune(threshold=agentdash_setting("GC_THRESHOLD"))
