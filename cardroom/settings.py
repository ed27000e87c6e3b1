"""Settings for the card room, driven by environment variables.

Embedded default (no variables set): DEBUG on, SQLite, in-memory channel layer.
Scale-out: DATABASE_URL (PostgreSQL) and REDIS_URL (channels-redis) switch the backends.
Production: DEBUG=0 and a real SECRET_KEY; HTTPS settings then default to secure values.
"""

import os
import tempfile
from pathlib import Path

import dj_database_url
from django.core.exceptions import ImproperlyConfigured
from django.utils.crypto import salted_hmac
from django.utils.csp import CSP

from cardroom.env import env_bool, env_int, env_list, env_str

BASE_DIR = Path(__file__).resolve().parent.parent

DEBUG = env_bool("DEBUG", True)
SECRET_KEY = env_str("SECRET_KEY")
if not SECRET_KEY:
    if not DEBUG:
        raise ImproperlyConfigured("SECRET_KEY must be set when DEBUG=0")
    SECRET_KEY = "django-insecure-development-only-key-do-not-use-in-production"

# No `testserver` (Django's test client's host): the test runner adds it for the tests.
ALLOWED_HOSTS = env_list("ALLOWED_HOSTS", ["127.0.0.1", "localhost", "[::1]"])
CSRF_TRUSTED_ORIGINS = env_list("CSRF_TRUSTED_ORIGINS", [])

INSTALLED_APPS = [
    "daphne",
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "whitenoise.runserver_nostatic",
    "django.contrib.staticfiles",
    "django.contrib.humanize",
    "channels",
    "django_htmx",
    "accounts",
    "live",
    "lobby",
    "blackjack",
    "durak",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "cardroom.middleware.refuse_nul",
    "cardroom.middleware.BusyDatabaseMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    # After the session, before CommonMiddleware (Django's order): the language from the cookie the language
    # switch sets or Accept-Language; then, once the user is known, the language stored on their account.
    "django.middleware.locale.LocaleMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "accounts.language.AccountLanguageMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "django.middleware.csp.ContentSecurityPolicyMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
]

ROOT_URLCONF = "cardroom.urls"
WSGI_APPLICATION = None
ASGI_APPLICATION = "cardroom.asgi.application"

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
                "django.template.context_processors.csp",
                "accounts.context_processors.wallet",
                "lobby.context.site_games",
            ],
        },
    },
]

# Databases: SQLite by default (IMMEDIATE transactions so writers serialise), PostgreSQL via DATABASE_URL.
DATABASE_URL = env_str("DATABASE_URL")
if env_int("CONN_MAX_AGE", 0) != 0:
    # Under ASGI every request and websocket may run on a fresh thread, and a kept connection stays with its
    # thread: connections pile up until PostgreSQL refuses more. PostgreSQL connections come from a pool.
    raise ImproperlyConfigured("CONN_MAX_AGE must be 0; size the connection pool with DB_POOL_MAX_SIZE")
#: PostgreSQL connections one server process holds at most (Django's psycopg pool). A request or websocket
#: message borrows one for its work and gives it back; one that finds them all busy waits up to
#: DB_POOL_TIMEOUT seconds, then fails (HTTP 503 with Retry-After, or `unavailable` on a websocket).
DB_POOL_MIN_SIZE = max(1, env_int("DB_POOL_MIN_SIZE", 2))
DB_POOL_MAX_SIZE = max(DB_POOL_MIN_SIZE, env_int("DB_POOL_MAX_SIZE", 10))
DB_POOL_TIMEOUT = max(1, env_int("DB_POOL_TIMEOUT", 10))
#: The pool's connections kept for the live tables (their actors' and sockets' database thread, the clock):
#: at most DB_POOL_MAX_SIZE minus these serve pages at once, so a burst of page requests never makes a
#: table's command wait for a connection (`cardroom.middleware.PageShare`; PostgreSQL only).
DB_POOL_RUNTIME_SHARE = min(max(1, env_int("DB_POOL_RUNTIME_SHARE", 3)), DB_POOL_MAX_SIZE - 1)
#: Pages this process serves at once (None: no bound, without a pool).
PAGE_CONCURRENCY: int | None = None
if DATABASE_URL:
    DATABASES = {"default": dj_database_url.parse(DATABASE_URL, conn_max_age=0)}
    if DATABASES["default"]["ENGINE"] == "django.db.backends.postgresql":
        # Parameters bound by the server, and every statement run twice on a connection prepared: PostgreSQL
        # then parses and plans the hot statements of an action once per connection, not on every run (its
        # CPU an action halved in tools/benchmarks/action_cost.py). Pooled connections keep their prepared
        # statements. `storage.batch` pipelines statements to send several in one round trip. No
        # transaction-pooling proxy (PgBouncer in transaction mode) may sit in between.
        DATABASES["default"]["OPTIONS"] = {
            "server_side_binding": True,
            "prepare_threshold": 2,
            "pool": {"min_size": DB_POOL_MIN_SIZE, "max_size": DB_POOL_MAX_SIZE, "timeout": DB_POOL_TIMEOUT},
            # A paused or cut-off process must not keep a table's row locked past its lease (live.lease's
            # LEASE_SECONDS): the next owner's take-over would wait for it. Its transaction is ended instead.
            "options": "-c idle_in_transaction_session_timeout=5000",
            **DATABASES["default"].get("OPTIONS", {}),
        }
        PAGE_CONCURRENCY = max(1, DB_POOL_MAX_SIZE - DB_POOL_RUNTIME_SHARE)
else:
    DATABASES = {
        "default": {
            "ENGINE": "django.db.backends.sqlite3",
            "NAME": env_str("SQLITE_PATH", str(BASE_DIR / "db.sqlite3")),
            # Connections are not kept (CONN_MAX_AGE 0): an SQLite connection must not cross a fork(), and the
            # test suite forks its live server while worker threads of earlier tests would still hold theirs.
            "OPTIONS": {
                "transaction_mode": "IMMEDIATE",
                "timeout": 20,
                "init_command": "PRAGMA journal_mode=WAL;",
            },
            # A file (Daphne test servers run in a child process), one per run so parallel runs never collide.
            "TEST": {"NAME": str(Path(tempfile.gettempdir()) / f"cardroom-test-{os.getpid()}.sqlite3")},
        }
    }
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"
# Deadlines of every game's live tables (live.clock, live.table): this process's actors' timers and its clock
# (lease renewal, the sweep of deadlines nobody applies). Every server process of a cluster runs them; 0
# leaves deadlines to explicit expiries and sweeps (the tests' own process).
LIVE_TIMERS = env_bool("LIVE_TIMERS", True)
# Durak tables (durak.actor): a bot moves this many seconds after its turn comes.
DURAK_BOT_SECONDS = float(env_str("DURAK_BOT_SECONDS") or 0.8)
# The Durak leaderboard lists a player once they have played rated games against this many different players
# (a rating traded among a few accounts of one's own stays off it).
DURAK_LEADERBOARD_MIN_OPPONENTS = env_int("DURAK_LEADERBOARD_MIN_OPPONENTS", 5)
# The staff's report of one-sided chip flows (admin: "Chip flow between players"): pairs of players who
# finished at least CHIP_FLOW_MIN_GAMES staked Durak games together within CHIP_FLOW_DAYS days, in which at
# least CHIP_FLOW_MIN_SHARE_PERCENT of the chips between them went one way, CHIP_FLOW_MIN_NET or more net.
CHIP_FLOW_DAYS = env_int("CHIP_FLOW_DAYS", 90)
CHIP_FLOW_MIN_GAMES = env_int("CHIP_FLOW_MIN_GAMES", 3)
CHIP_FLOW_MIN_SHARE_PERCENT = env_int("CHIP_FLOW_MIN_SHARE_PERCENT", 80)
CHIP_FLOW_MIN_NET = env_int("CHIP_FLOW_MIN_NET", 1_000)

# Channel layer: in-memory by default, Redis when REDIS_URL is set.
REDIS_URL = env_str("REDIS_URL")
# Every message on the Redis layer is encrypted and authenticated (Fernet) with CHANNEL_LAYER_KEY: Redis and
# whoever can write to it see no hole card or seed, and a message forged without the key is dropped.
# Comma-separated keys rotate one: the first encrypts, each decrypts. The default is derived from SECRET_KEY,
# so processes sharing SECRET_KEY share the key and a deployment needs nothing more.
CHANNEL_LAYER_KEYS = env_list("CHANNEL_LAYER_KEY", []) or [
    salted_hmac("cardroom.channel_layer", "key", secret=SECRET_KEY, algorithm="sha256").hexdigest()
]
if REDIS_URL:
    CHANNEL_LAYERS = {
        "default": {
            # channels-redis with a pool that waits when its connections are all busy (redis-py 8's raises).
            "BACKEND": "cardroom.channel_layer.RedisChannelLayer",
            # redis-py 8 reads with a 5 s socket timeout by default, which ends channels-redis's 5 s blocking
            # pop on every idle consumer: wait longer than the pop, but not forever (a dead peer is noticed).
            "CONFIG": {
                "hosts": [{"address": REDIS_URL, "socket_timeout": 15}],
                "capacity": 200,
                "expiry": 30,
                "pool_max_size": env_int("REDIS_POOL_MAX_SIZE", 50),
                "symmetric_encryption_keys": CHANNEL_LAYER_KEYS,
            },
        }
    }
else:
    CHANNEL_LAYERS = {"default": {"BACKEND": "channels.layers.InMemoryChannelLayer"}}

AUTH_USER_MODEL = "accounts.User"
AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]
LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "lobby"
LOGOUT_REDIRECT_URL = "lobby"

# Django 6.1 mailers: the console in development (password-reset links appear in the server's output),
# SMTP configured from the environment in production.
EMAIL_BACKEND_PATH = env_str(
    "EMAIL_BACKEND",
    f"django.core.mail.backends.{'console' if DEBUG else 'smtp'}.EmailBackend",
)
MAILERS = {"default": {"BACKEND": EMAIL_BACKEND_PATH}}
if EMAIL_BACKEND_PATH.endswith("smtp.EmailBackend"):
    MAILERS["default"]["OPTIONS"] = {
        "host": env_str("EMAIL_HOST", "localhost"),
        "port": env_int("EMAIL_PORT", 587),
        "username": env_str("EMAIL_HOST_USER"),
        "password": env_str("EMAIL_HOST_PASSWORD"),
        "use_tls": env_bool("EMAIL_USE_TLS", True),
    }
DEFAULT_FROM_EMAIL = env_str("DEFAULT_FROM_EMAIL", "cardroom@localhost")

# English by default; Russian for Durak's players (issue 33). The choice is made with the header's switch
# (`accounts.language`): a cookie for a visitor, stored on the account of a logged-in user.
LANGUAGE_CODE = "en"
LANGUAGES = [("en", "English"), ("ru", "Русский")]
LOCALE_PATHS = [BASE_DIR / "locale"]
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATIC_ROOT = BASE_DIR / "staticfiles"
STATICFILES_DIRS = [BASE_DIR / "static"]
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {
        "BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"
        if DEBUG
        else "whitenoise.storage.CompressedManifestStaticFilesStorage"
    },
}

# Content Security Policy with per-request nonces (Django 6). Websockets are same-origin ('self').
SECURE_CSP = {
    "default-src": [CSP.SELF],
    "script-src": [CSP.SELF, CSP.NONCE],
    "style-src": [CSP.SELF],
    "img-src": [CSP.SELF, "data:"],
    "connect-src": [CSP.SELF],
    "frame-ancestors": [CSP.NONE],
    "form-action": [CSP.SELF],
    "base-uri": [CSP.SELF],
    "object-src": [CSP.NONE],
}

# HTTPS hardening: on by default in production (DEBUG=0), each switchable for a plain-HTTP local cluster.
SECURE_SSL_REDIRECT = env_bool("SECURE_SSL_REDIRECT", not DEBUG)
SESSION_COOKIE_SECURE = env_bool("SESSION_COOKIE_SECURE", not DEBUG)
CSRF_COOKIE_SECURE = env_bool("CSRF_COOKIE_SECURE", not DEBUG)
SECURE_HSTS_SECONDS = env_int("SECURE_HSTS_SECONDS", 0 if DEBUG else 31536000)
SECURE_HSTS_INCLUDE_SUBDOMAINS = env_bool("SECURE_HSTS_INCLUDE_SUBDOMAINS", not DEBUG)
SECURE_HSTS_PRELOAD = env_bool("SECURE_HSTS_PRELOAD", not DEBUG)
SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https") if env_bool("BEHIND_PROXY", False) else None
SECURE_CONTENT_TYPE_NOSNIFF = True
SECURE_REFERRER_POLICY = "same-origin"
X_FRAME_OPTIONS = "DENY"

# Registrations one client may make (`accounts.throttling`), since every account comes with STARTING_CHIPS:
# per address (IPv4, or an IPv6 /64) within an hour, and per network (IPv4 /24, IPv6 /48) within a day.
REGISTRATION_LIMIT_PER_ADDRESS = env_int("REGISTRATION_LIMIT_PER_ADDRESS", 3)
REGISTRATION_ADDRESS_WINDOW_SECONDS = env_int("REGISTRATION_ADDRESS_WINDOW_SECONDS", 3600)
REGISTRATION_LIMIT_PER_NETWORK = env_int("REGISTRATION_LIMIT_PER_NETWORK", 10)
REGISTRATION_NETWORK_WINDOW_SECONDS = env_int("REGISTRATION_NETWORK_WINDOW_SECONDS", 24 * 3600)

# Throttling counters live in the cache: shared through Redis when several processes serve the site.
if REDIS_URL:
    CACHES = {"default": {"BACKEND": "django.core.cache.backends.redis.RedisCache", "LOCATION": REDIS_URL}}
else:
    CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": env_str("LOG_LEVEL", "INFO")},
    "loggers": {"django.channels.server": {"level": "WARNING"}},
}

# Game economy.
STARTING_CHIPS = 10_000
DAILY_GRANT_FLOOR = 1_000
DAILY_GRANT_INTERVAL_HOURS = 24
# A new account (joined under NEW_ACCOUNT_DAYS days ago and with fewer than NEW_ACCOUNT_GAMES finished games)
# stakes at most NEW_ACCOUNT_STAKE_LIMIT chips a game (`accounts.limits`): accounts made to lose their
# starting chips to one player cannot pass them on in a few games.
NEW_ACCOUNT_STAKE_LIMIT = env_int("NEW_ACCOUNT_STAKE_LIMIT", 500)
NEW_ACCOUNT_DAYS = env_int("NEW_ACCOUNT_DAYS", 3)
NEW_ACCOUNT_GAMES = env_int("NEW_ACCOUNT_GAMES", 10)

# Table limits: the site-wide ceiling of any table's maximum bet, and the default bounds for tables that
# players open themselves (staff override the latter in the admin's "Open table bounds").
TABLE_MAX_BET_CAP = env_int("TABLE_MAX_BET_CAP", 100_000)
TABLES_OPEN_MIN_BET = env_int("TABLES_OPEN_MIN_BET", 1)
TABLES_OPEN_MAX_BET = env_int("TABLES_OPEN_MAX_BET", 10_000)

# House-edge estimates of rule presets (simulated in the background when staff change the rules).
HOUSE_EDGE_ROUNDS = env_int("HOUSE_EDGE_ROUNDS", 300_000)
HOUSE_EDGE_MAX_SECONDS = env_int("HOUSE_EDGE_MAX_SECONDS", 180)
