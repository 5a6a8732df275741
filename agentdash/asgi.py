"""The ASGI application daphne serves."""

import os

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "agentdash.settings")

from django.core.asgi import get_asgi_application

django_asgi_app = get_asgi_application()

from channels.routing import ProtocolTypeRouter  # noqa: E402
from django.conf import settings  # noqa: E402
from django.contrib.staticfiles.handlers import ASGIStaticFilesHandler  # noqa: E402

# In development daphne serves /static/ itself, as runserver does; in production a web server
# (or whitenoise) does.
http_app = ASGIStaticFilesHandler(django_asgi_app) if settings.DEBUG else django_asgi_app

application = ProtocolTypeRouter({"http": http_app})
