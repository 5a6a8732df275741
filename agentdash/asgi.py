"""The ASGI application daphne serves."""

import os

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "agentdash.settings")

from django.core.asgi import get_asgi_application

django_asgi_app = get_asgi_application()

from channels.routing import ProtocolTypeRouter  # noqa: E402

application = ProtocolTypeRouter({"http": django_asgi_app})
