"""Where the tests find the real data beside the checkout, as iosched itself finds it (never a machine's path)."""

from pathlib import Path

from iosched.batch.study import theta_log
from iosched.errors import InstanceError


def theta() -> Path:
    """The Theta log ($IOSCHED_THETA_LOG, else ../shared/data beside the checkout); a path that is not a file where
    it is absent (the tests that need it skip, saying so)."""
    try:
        return theta_log()
    except InstanceError:
        return Path("no Theta log")
