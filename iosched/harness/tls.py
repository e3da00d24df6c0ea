"""TLS between the bench, its Dask scheduler and the workers.

The Dask protocol carries pickled functions: whoever reaches a scheduler (or a worker) runs code as
the user who started it. So ``bench --slurm`` starts its scheduler with TLS and mutual authentication
(``distributed.Security`` with ``require_encryption``): the scheduler, the workers and the bench's
client each present the same temporary certificate, and a connection without it is refused in the
handshake. This is what dask-jobqueue's ``security=True`` does with ``Security.temporary()``, which
needs the ``cryptography`` package; the certificate here is made by the ``openssl`` command instead
(present wherever Python's ``ssl`` is), so ``iosched[dask]`` needs no new dependency. It lives in a
folder of mode 0700 under the bench's ``--out`` (the workers, run as the same user on a shared file
system, read it from there), and is removed when the bench ends.

``--scheduler`` connects to a scheduler of the user's own: ``tls://`` with the Dask security
configuration (``distributed.comm.tls.*``), checked before connecting; a plain ``tcp://`` address
beyond this host is taken with a warning.
"""

from __future__ import annotations

import contextlib
import ipaddress
import shutil
import subprocess
import tempfile
import warnings
from pathlib import Path

from iosched.errors import ParameterError

CERT_DAYS = 30  # the temporary certificate's validity: past a month, a resumed bench makes a new one
TLS_CONFIG = ("distributed.comm.tls.ca-file", "distributed.comm.tls.client.cert", "distributed.comm.tls.client.key")


class InsecureSchedulerWarning(UserWarning):
    """A Dask scheduler on plain TCP that other hosts may reach: whoever connects runs code as the user."""


def temporary_security(parent: Path):
    """A ``distributed.Security`` requiring TLS, its one certificate and key (EC P-256, self-signed,
    ``CERT_DAYS`` days) in a new folder of mode 0700 under ``parent``; (security, folder)."""
    from distributed.security import Security

    openssl = shutil.which("openssl")
    if openssl is None:
        raise ParameterError("--slurm starts its Dask scheduler with TLS, and its temporary certificate is made by "
                             "the openssl command, not found on the PATH; install openssl, or set [slurm] "
                             "insecure = true (plain TCP: whoever reaches the scheduler runs code as you)")
    folder = Path(tempfile.mkdtemp(prefix=".tls-", dir=parent))  # mode 0700
    cert, key = folder / "cert.pem", folder / "key.pem"
    try:
        proc = subprocess.run([openssl, "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
                               "-nodes", "-sha256", "-days", str(CERT_DAYS), "-subj", "/CN=iosched-bench",
                               "-keyout", str(key), "-out", str(cert)],
                              capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired) as e:
        shutil.rmtree(folder, ignore_errors=True)
        raise ParameterError(f"openssl could not make the scheduler's temporary certificate: {e}") from None
    if proc.returncode or not key.is_file() or not cert.is_file():
        shutil.rmtree(folder, ignore_errors=True)
        said = " ".join(proc.stderr.split())[-300:]
        raise ParameterError(f"openssl could not make the scheduler's temporary certificate: {said}")
    key.chmod(0o600)
    files = {f"tls_{role}_{kind}": str(path) for role in ("scheduler", "worker", "client")
             for kind, path in (("cert", cert), ("key", key))}
    return Security(tls_ca_file=str(cert), require_encryption=True, **files), folder


def remove_stale(parent: Path) -> None:
    """The certificate folders a killed bench left under ``parent`` (one bench at a time holds the results
    folder, so any found at the start of a run is stale)."""
    for folder in parent.glob(".tls-*"):
        with contextlib.suppress(OSError):
            if folder.is_dir() and not folder.is_symlink():
                shutil.rmtree(folder)


def checked_address(address: str) -> str:
    """A ``--scheduler`` address that names a scheme Dask knows, a host and a port; a ``tls://`` one only
    with a Dask TLS configuration for a client (ParameterError naming what to set); a ``tcp://`` one
    beyond this host with a warning."""
    from distributed.comm import parse_address, parse_host_port
    from distributed.security import Security

    try:
        scheme, location = parse_address(address, strict=True)
        host = parse_host_port(location)[0] if scheme != "inproc" else None
    except (ValueError, TypeError) as e:
        raise ParameterError(f"--scheduler {address!r}: not a Dask scheduler address (tls://HOST:PORT): {e}") from None
    if scheme not in ("tls", "tcp", "inproc"):  # (inproc: a cluster in this very process, from the API)
        raise ParameterError(f"--scheduler {address!r}: the scheme must be tls:// (or tcp://), got {scheme}://")
    if scheme == "tls":
        if Security().get_connection_args("client").get("ssl_context") is None:
            raise ParameterError(f"--scheduler {address!r}: a tls:// scheduler needs Dask's TLS configuration for a "
                                 f"client ({', '.join(TLS_CONFIG)}; e.g. the environment variables "
                                 "DASK_DISTRIBUTED__COMM__TLS__CA_FILE, ..._CLIENT__CERT and ..._CLIENT__KEY)")
    elif scheme == "tcp" and not _loopback(host):
        warnings.warn(f"--scheduler {address}: plain TCP to another host: whoever can reach that scheduler runs code "
                      "as its workers' user, and the tasks travel unencrypted; prefer a tls:// scheduler",
                      InsecureSchedulerWarning, stacklevel=2)
    return address


def _loopback(host: str) -> bool:
    if host == "localhost":
        return True
    with contextlib.suppress(ValueError):
        return ipaddress.ip_address(host).is_loopback
    return False


def connect(address: str, **kwargs):
    """A ``distributed.Client`` of ``address`` (checked by :func:`checked_address` for a user's scheduler);
    a scheduler that cannot be reached or refuses the handshake is a ParameterError naming it."""
    from dask.distributed import Client

    try:
        return Client(address, **kwargs)
    except (OSError, TimeoutError, ValueError, TypeError) as e:
        raise ParameterError(f"cannot use the Dask scheduler at {address}: {e}") from None

