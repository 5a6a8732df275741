"""Settings for the embedded default and for development.

Everything that differs between machines comes from environment variables, each with a
documented default (see docs/CONFIGURATION.md). Production: ``agentdash.settings.production``.
"""

from __future__ import annotations

import os
from pathlib import Path

import dj_database_url
from django.conf import global_settings

from agentdash.core.conf import agentdash_from_environment
from agentdash.core.env_values import env_bool, env_list

# gRPC (OTLP/gRPC ingest, served from the server process) must not run its fork handlers:
# the sandbox starts each run by fork and exec from this process, and with them on, a child
# could die between the two (its stderr said "Epoll1Poller", the run's gate never read
# "go"). No child of ours uses gRPC, so it needs none; set before anything imports grpc.
os.environ.setdefault("GRPC_ENABLE_FORK_SUPPORT", "false")

BASE_DIR = Path(__file__).resolve().parent.parent.parent
VAR_DIR = Path(os.environ.get("AGENTDASH_VAR_DIR", BASE_DIR / "var"))
VAR_DIR.mkdir(parents=True, exist_ok=True)

DEBUG = env_bool("DEBUG", True)
SECRET_KEY = os.environ.get("SECRET_KEY") or (
    "dev-only-insecure-key-set-SECRET_KEY-in-production" if DEBUG else ""
)

ALLOWED_HOSTS = env_list("ALLOWED_HOSTS", ["127.0.0.1", "localhost"])
CSRF_TRUSTED_ORIGINS = env_list("CSRF_TRUSTED_ORIGINS", [])

INSTALLED_APPS = [
    "daphne",
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "channels",
    # Bottom to top (docs/ARCHITECTURE.md): each app imports only the ones above it here.
    "agentdash.core",
    "agentdash.changes",
    "agentdash.agent_sessions",
    "agentdash.spans",
    "agentdash.registry",
    "agentdash.controls",
    "agentdash.instructions",
    "agentdash.runs",
    "agentdash.ingest",
    "agentdash.remote",
    "agentdash.live",
    "agentdash.evals",
    "agentdash.scores",
    "agentdash.playground",
    "agentdash.demo",
    "agentdash.dashboard",
    "agentdash.monitor",
]

MIDDLEWARE = [
    # First: it turns what every layer below made of an unreachable database into a 503.
    "agentdash.core.middleware.DatabaseUnavailableMiddleware",
    "django.middleware.security.SecurityMiddleware",
    "agentdash.core.middleware.RequestIdMiddleware",
    "agentdash.core.middleware.ContentSecurityPolicyMiddleware",
    # Before anything reads the session or a form: 400 for NUL / unpaired surrogates.
    "agentdash.core.middleware.InputHygieneMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
]

ROOT_URLCONF = "agentdash.urls"
ASGI_APPLICATION = "agentdash.asgi.application"
WSGI_APPLICATION = None

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "agentdash.core.context_processors.csp_nonce",
                "agentdash.core.context_processors.theme",
                "agentdash.monitor.context_processors.alerts",
            ],
        },
    }
]

_DATABASE_URL = os.environ.get("DATABASE_URL") or f"sqlite:///{VAR_DIR / 'agentdash.sqlite3'}"
DATABASES = {
    "default": dj_database_url.parse(
        _DATABASE_URL,
        # Seconds a thread keeps its connection (0: one per unit of work), checked before
        # reuse. Runs and the live pipeline do their database work on small thread pools:
        # `make worker` keeps those connections (60); an SQLite file keeps them by default
        # (opening one runs the PRAGMAs below each time, for nothing).
        conn_max_age=int(
            os.environ.get("DATABASE_CONN_MAX_AGE")
            or ("600" if _DATABASE_URL.startswith("sqlite") else "0")
        ),
        conn_health_checks=True,
    )
}
_POOL_MAX = int(os.environ.get("DATABASE_POOL_MAX_SIZE") or "10")
if DATABASES["default"]["ENGINE"] == "django.db.backends.postgresql":
    # A server that does not answer (a partition, not a refused connection) must not hold a
    # heartbeat or a page for minutes: connecting gives up after a few seconds, and TCP
    # keepalives find a dead peer of a kept connection.
    DATABASES["default"].setdefault("OPTIONS", {}).update(
        {
            "connect_timeout": int(os.environ.get("DATABASE_CONNECT_TIMEOUT") or "5"),
            "keepalives": 1,
            "keepalives_idle": 30,
            "keepalives_interval": 10,
            "keepalives_count": 3,
        }
    )
    # Parameters sent apart from the statement (psycopg's server-side binding; Django's
    # default quotes each into the SQL text in Python: a fifth of a worker's flush went to
    # quoting spans' JSON), and a statement a connection has run five times prepared on the
    # server (psycopg's threshold, which Django turns off): parsed once per connection, not
    # at every row of a flush's many-row insert — a third of PostgreSQL's time in a burst.
    # A prepared statement whose result type a migration changed (a column's type) fails on
    # its connection until the connection goes: restart the servers after such a migration
    # (docs/DEPLOY.md). Behind a pooler that cannot keep prepared statements (PgBouncer in
    # transaction mode before 1.21, or without max_prepared_statements),
    # DATABASE_SERVER_SIDE_BINDING=0 turns both off.
    _SERVER_SIDE = env_bool("DATABASE_SERVER_SIDE_BINDING", True)
    DATABASES["default"]["OPTIONS"]["server_side_binding"] = _SERVER_SIDE
    DATABASES["default"]["OPTIONS"]["prepare_threshold"] = 5 if _SERVER_SIDE else None
    # A pool per process (Django 5.1+, psycopg_pool): every request and every unit of work
    # takes a connection and gives it back, so a process never holds more than the pool's
    # size — daphne's threads each kept one of their own (CONN_MAX_AGE), and a burst took
    # PostgreSQL's every slot. A burst past the pool waits its turn (DATABASE_POOL_TIMEOUT),
    # then is a 503 like any outage. DATABASE_POOL_MAX_SIZE=0: no pool (CONN_MAX_AGE again).
    if _POOL_MAX > 0:
        DATABASES["default"]["ENGINE"] = "agentdash.core.postgresql"  # fails fast when down
        DATABASES["default"]["CONN_MAX_AGE"] = 0  # the pool keeps them instead
        DATABASES["default"]["OPTIONS"]["pool"] = {  # checked before use (CONN_HEALTH_CHECKS)
            "min_size": min(2, _POOL_MAX),
            "max_size": _POOL_MAX,
            "timeout": float(os.environ.get("DATABASE_POOL_TIMEOUT") or "10"),
        }
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    # WAL lets readers go on while one writer commits; IMMEDIATE takes the write lock at
    # BEGIN so two writers queue instead of failing with "database is locked": in one process
    # on a lock (agentdash.core.sqlite), between processes in SQLite's busy_timeout.
    DATABASES["default"]["ENGINE"] = "agentdash.core.sqlite"
    DATABASES["default"]["OPTIONS"] = {
        "init_command": (
            "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL; PRAGMA busy_timeout=10000;"
        ),
        "transaction_mode": "IMMEDIATE",
        # Idle connections kept for the next request or unit of work of any thread (opening
        # one costs ~0.6 ms, most of it parsing the schema; a thread that ends takes its own
        # along). DATABASE_POOL_MAX_SIZE=0: none kept.
        "pool": {"max_size": _POOL_MAX},
    }

DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]
# Servers the tests start (AGENTDASH_TEST_FAST_PASSWORDS=1) hash passwords with one round of
# salted MD5, Django's advice for tests: PBKDF2's million iterations cost ~0.4 s of CPU a
# login and 1.4 s a `seed_demo`, in every server a test starts. The default hashers stay
# listed after it, so a PBKDF2 hash still checks — and is rewritten as MD5 at its user's next
# login (Django re-hashes with the first hasher). Never in a deployment: the production
# settings refuse to load with it, `check --deploy` reports it (agentdash.E011).
FAST_PASSWORDS = env_bool("AGENTDASH_TEST_FAST_PASSWORDS", False)
if FAST_PASSWORDS:
    PASSWORD_HASHERS = [
        "django.contrib.auth.hashers.MD5PasswordHasher",
        *global_settings.PASSWORD_HASHERS,
    ]
LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "dashboard:home"
LOGOUT_REDIRECT_URL = "login"

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "/static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
STATIC_ROOT = VAR_DIR / "staticfiles"

REDIS_URL = os.environ.get("REDIS_URL", "")
if REDIS_URL:
    CHANNEL_LAYERS = {
        "default": {
            "BACKEND": "channels_redis.pubsub.RedisPubSubChannelLayer",
            # Redis pub/sub channels are shared by every database number of a server: two
            # installations on one Redis keep apart by their prefix (channels_redis's: asgi).
            "CONFIG": {
                "hosts": [{"address": REDIS_URL, "max_connections": 100}],
                "prefix": os.environ.get("CHANNEL_LAYER_PREFIX", "asgi"),
            },
        }
    }
else:
    # The in-memory layer drops messages past its capacity (100 by default): raise it.
    CHANNEL_LAYERS = {
        "default": {
            "BACKEND": "channels.layers.InMemoryChannelLayer",
            "CONFIG": {"capacity": 10_000, "expiry": 60},
        }
    }

X_FRAME_OPTIONS = "DENY"
SECURE_CONTENT_TYPE_NOSNIFF = True
SECURE_REFERRER_POLICY = "same-origin"
SESSION_ENGINE = "agentdash.core.session_store"  # database sessions; a forged key is no key
SESSION_COOKIE_HTTPONLY = True
CSRF_COOKIE_HTTPONLY = True

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {
        "timed": {"format": "%(asctime)s %(levelname)s %(process)d %(name)s: %(message)s"}
    },
    # The same message again and again (a library retrying through an outage) is shown once
    # per 30 s, with a count (agentdash.core.log_filters).
    "filters": {"repeats": {"()": "agentdash.core.log_filters.RepeatFilter"}},
    "handlers": {
        "console": {
            "class": "logging.StreamHandler",
            "formatter": "timed",
            "filters": ["repeats"],
        }
    },
    "root": {"handlers": ["console"], "level": os.environ.get("LOG_LEVEL", "INFO")},
    "loggers": {"runtime.steps": {"level": "WARNING"}},
}

# AgentDash's own settings: every key, its variable and its default are in one table,
# agentdash.core.conf.SETTINGS (docs/CONFIGURATION.md).
AGENTDASH = agentdash_from_environment()

# Celery, for AGENTDASH_EXECUTOR=celery (agentdash/celery_app.py). Redis is the broker; there
# is no result backend (the Run row is the truth). A run's message is acknowledged when the
# run ends (acks_late): a worker killed mid-run leaves it for another worker once the
# visibility timeout has passed, and reject_on_worker_lost re-queues it when a pool sees its
# process die. One message per task slot (prefetch multiplier 1): a busy worker never sits on
# runs another could start. The threads pool: each task slot only waits for its run, which
# executes on the worker process's one event loop (see agentdash/runs/tasks.py).
CELERY_BROKER_URL = os.environ.get("CELERY_BROKER_URL") or REDIS_URL
# A worker outlives broker outages: it reconnects with backoff for as long as it takes (the
# default gives up after 100 attempts), and the runs it is executing go on meanwhile — their
# truth is the database, and a redelivered message is harmless (runs are claimed). Celery 6
# is to cancel them by default: say no. (Celery 5.7.0 exits after an outage instead: see the
# pin in pyproject.toml.)
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
CELERY_BROKER_CONNECTION_RETRY = True
CELERY_BROKER_CONNECTION_MAX_RETRIES = None
CELERY_WORKER_CANCEL_LONG_RUNNING_TASKS_ON_CONNECTION_LOSS = False
CELERY_BROKER_TRANSPORT_OPTIONS = {
    "visibility_timeout": float(os.environ.get("CELERY_VISIBILITY_TIMEOUT", "3600")),
}
CELERY_TASK_DEFAULT_QUEUE = os.environ.get("CELERY_QUEUE", "agentdash-runs")
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_TASK_IGNORE_RESULT = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_WORKER_POOL = "threads"
CELERY_WORKER_CONCURRENCY = int(os.environ.get("CELERY_WORKER_CONCURRENCY", "8"))
CELERY_WORKER_HIJACK_ROOT_LOGGER = False
