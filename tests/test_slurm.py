"""``iosched bench --slurm`` against a real single-node Slurm that this file starts (tests/slurm_node.py)
and stops, whatever happens, checking that none of its processes is left. All Slurm tests stay in
this one file: one pytest process owns the cluster."""

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest
import slurm_node
from dask.distributed import Client
from hypothesis import example, given, settings
from hypothesis import strategies as st

from iosched.errors import ParameterError
from iosched.harness import runner
from iosched.harness.runner import read_result, run_suite
from iosched.harness.slurm import KEYS, SlurmError, check_interface, check_paths, job_options, options, parse_opt
from iosched.harness.suite import load_suite

pytest.importorskip("dask_jobqueue")
IOSCHED = [sys.executable, "-m", "iosched.cli"]

WINDOW = """
name = "slurm-window"
problem = "window"
profile = "quick"
seeds = 2
[instances]
[[instances.generate]]
seeds = [0, 1, 2, 3]
size = 8
[[methods]]
name = "naive"
[[methods]]
name = "first-fit"
[[methods]]
name = "bin-packing"
[[methods]]
name = "bbsched-ga"
[[methods]]
name = "exact"
"""
FILEDOMAIN = """
name = "slurm-filedomain"
problem = "filedomain"
profile = "quick"
[instances]
names = ["paper:fig2", "paper:fig2d", "example:gpfs", "example:requests"]
[[methods]]
name = "even"
[[methods]]
name = "static-cyclic"
[[methods]]
name = "stripe-aligned"
[[methods]]
name = "transpose"
[[methods]]
name = "group-cyclic"
[[methods]]
name = "exact"
"""
# solver-free tasks that each run until their time limit (TIME_LIMIT, or OK where the value met the bound):
# long enough to cancel a job under them
GA = """
name = "slurm-ga"
problem = "window"
profile = "quick"
seeds = {seeds}
[instances]
[[instances.generate]]
seeds = [0, 1, 2, 3]
size = 8
[[methods]]
name = "bbsched-ga"
params = {{ generations = 1000000, patience = 1000000, time_limit = {time_limit} }}
[slurm]
partition = "debug"
jobs = {jobs}
memory = "1GB"
walltime = "{walltime}"
interface = "lo"
"""
TWO_JOBS = {"partition": slurm_node.PARTITION, "jobs": 2, "cores": 1, "memory": "1GB", "walltime": "00:10:00",
            "interface": "lo"}


@pytest.fixture(scope="session")
def slurm():
    """A throw-away single-node Slurm (SLURM_CONF set for this process and its children)."""
    reason = slurm_node.missing()
    if reason:
        pytest.skip(f"no single-node Slurm: {reason}")
    root = Path(tempfile.mkdtemp(prefix="iosched-slurm-"))  # not under pytest's 0700 folder: munged refuses it
    node = slurm_node.SingleNodeSlurm(root)
    before = os.environ.get("SLURM_CONF")
    try:
        node.start()
        os.environ["SLURM_CONF"] = str(node.conf)
        yield node
    finally:
        left = node.stop()
        if before is None:
            os.environ.pop("SLURM_CONF", None)
        else:
            os.environ["SLURM_CONF"] = before
        subprocess.run(["rm", "-rf", str(root)])
        assert not left, f"left after the Slurm was stopped (now killed): {left}"


def _no_jobs_left(node, within: float = 30.0) -> bool:
    deadline = time.monotonic() + within
    while node.jobs() and time.monotonic() < deadline:
        time.sleep(0.2)
    return not node.jobs()


def _suite(tmp_path, name, text):
    path = tmp_path / f"{name}.toml"
    path.write_text(text)
    return load_suite(str(path))


def _records(out: Path) -> dict:
    return {p.stem: read_result(p) for p in (out / "results").glob("*.json")}


def _bench(args, **kw) -> subprocess.Popen:
    return subprocess.Popen([*IOSCHED, "bench", *map(str, args)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, **kw)


def _running_jobs(node) -> list[str]:
    out = subprocess.run(["squeue", "-h", "-n", "iosched-bench", "-t", "RUNNING", "-o", "%i"], capture_output=True,
                         text=True, env=node.env).stdout
    return out.split()


def _wait_for_results(out: Path, n: int, proc, within: float = 240.0) -> int:
    deadline = time.monotonic() + within
    while time.monotonic() < deadline and proc.poll() is None:
        count = len(list((out / "results").glob("*.json")))
        if count >= n:
            return count
        time.sleep(0.2)
    raise AssertionError(f"{n} results not written within {within:g} s (bench exit code {proc.poll()})")


def test_forty_eight_tasks_on_two_jobs_equal_the_local_pool(slurm, tmp_path):
    suites = [_suite(tmp_path, "w", WINDOW), _suite(tmp_path, "f", FILEDOMAIN)]
    assert sum(len(s.tasks) for s in suites) >= 40
    for suite in suites:
        assert any(runner.needs_fresh_process(t) for t in suite.tasks)
        assert not all(runner.needs_fresh_process(t) for t in suite.tasks)
        local, on_slurm = tmp_path / f"local-{suite.name}", tmp_path / f"slurm-{suite.name}"
        run_suite(suite, local, workers=2, progress=False)
        counts = run_suite(suite, on_slurm, slurm=TWO_JOBS, progress=False)
        assert counts == {"done": len(suite.tasks), "failed": 0, "skipped": 0}
        a, b = _records(local), _records(on_slurm)
        assert a.keys() == b.keys() == {t.key for t in suite.tasks}
        assert {k: (r["status"], r["objective"]) for k, r in a.items()} == \
               {k: (r["status"], r["objective"]) for k, r in b.items()}
        assert all(r["status"] == "OK" for r in b.values())
        jobs = {r["slurm_job_id"] for r in b.values()}
        assert len(jobs) == 2 and None not in jobs  # both jobs ran tasks
        assert {r["worker_host"] for r in b.values()} == {slurm.node}
        assert {r["worker"] for r in b.values()} == {"dask", "subprocess"}
        assert not any(r.get("slurm_job_id") for r in a.values())
        assert _no_jobs_left(slurm)
    assert list((on_slurm / "slurm-logs").glob("*.err"))  # the jobs' output is kept beside the results


def test_a_worker_job_cancelled_mid_suite_is_replaced_and_the_suite_completes(slurm, tmp_path):
    path = tmp_path / "ga.toml"
    path.write_text(GA.format(seeds=3, jobs=2, walltime="00:10:00", time_limit=1))
    total = len(load_suite(str(path)).tasks)
    out = tmp_path / "out"
    proc = _bench([path, "--out", out, "--slurm"])
    try:
        _wait_for_results(out, 2, proc)
        victim = _running_jobs(slurm)[0]
        subprocess.run(["scancel", victim], check=True, env=slurm.env)
        at_cancel = len(list((out / "results").glob("*.json")))
        _, err = proc.communicate(timeout=300)
    finally:
        proc.kill()
    assert proc.returncode == 0, err[-2000:]
    assert at_cancel < total  # the job was cancelled while tasks were left
    assert f"Slurm job {victim} ended" in err and "a new job replaces it (1 of 10 restarts)" in err
    records = _records(out)
    assert len(records) == total
    assert all(r["status"] in ("OK", "TIME_LIMIT") for r in records.values()), [r["message"] for r in records.values()]
    assert len({r["slurm_job_id"] for r in records.values()}) >= 2
    assert _no_jobs_left(slurm)


def test_a_task_lost_with_its_worker_more_than_retries_times_is_an_error_naming_why(slurm, tmp_path):
    path = tmp_path / "ga.toml"
    path.write_text(GA.format(seeds=2, jobs=1, walltime="00:10:00", time_limit=1))
    total = len(load_suite(str(path)).tasks)
    out = tmp_path / "out"
    proc = _bench([path, "--out", out, "--slurm", "--slurm-opt", "retries=0"])
    try:
        _wait_for_results(out, 1, proc)
        subprocess.run(["scancel", "-n", "iosched-bench"], check=True, env=slurm.env)
        stdout, err = proc.communicate(timeout=300)
    finally:
        proc.kill()
    assert proc.returncode == 0, err[-2000:]
    records = _records(out)
    assert len(records) == total
    lost = [r for r in records.values() if r["status"] == "ERROR"]
    assert 1 <= len(lost) <= 2 and f"{len(lost)} failed" in stdout  # the tasks the cancelled job held
    assert all("lost with its worker" in r["message"] and "KilledWorker" in r["message"] for r in lost)
    assert all(r["status"] in ("OK", "TIME_LIMIT") for r in records.values() if r not in lost)
    assert _no_jobs_left(slurm)


def test_allocation_gone_mid_suite_then_the_same_bench_resumes(slurm, tmp_path):
    path = tmp_path / "ga.toml"
    path.write_text(GA.format(seeds=3, jobs=1, walltime="00:10:00", time_limit=1))
    total = len(load_suite(str(path)).tasks)
    out = tmp_path / "out"
    proc = _bench([path, "--out", out, "--slurm", "--slurm-opt", "restarts=0"])
    try:
        _wait_for_results(out, 2, proc)
        subprocess.run(["scancel", "-n", "iosched-bench"], check=True, env=slurm.env)
        _, err = proc.communicate(timeout=120)
    finally:
        proc.kill()
    assert proc.returncode == 2, err[-2000:]
    assert "every Slurm worker job ended and the 0 restarts are spent" in err and "Traceback" not in err
    first = _records(out)
    assert 2 <= len(first) < total and all(r is not None for r in first.values())  # whole files only
    assert not [p for p in (out / "results").iterdir() if p.suffix != ".json" or p.name.startswith(".")]
    assert _no_jobs_left(slurm)
    again = subprocess.run([*IOSCHED, "bench", str(path), "--out", str(out), "--slurm"], capture_output=True,
                           text=True, timeout=300)
    assert again.returncode == 0, again.stderr[-2000:]
    assert f"{total - len(first)} run (0 failed), {len(first)} already done" in again.stdout
    assert {k: r["pid"] for k, r in _records(out).items() if k in first} == {k: r["pid"] for k, r in first.items()}
    assert _no_jobs_left(slurm)


@pytest.mark.slow  # 40 tasks of 3 s on one job: Slurm ends it 60-90 s in, a new one finishes: 2-3 minutes
def test_a_job_past_its_walltime_is_replaced(slurm, tmp_path):
    path = tmp_path / "ga.toml"
    path.write_text(GA.format(seeds=10, jobs=1, walltime="00:01:00", time_limit=3))
    total = len(load_suite(str(path)).tasks)
    out = tmp_path / "out"
    done = subprocess.run([*IOSCHED, "bench", str(path), "--out", str(out), "--slurm"], capture_output=True,
                          text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    records = _records(out)
    assert len(records) == total
    assert all(r["status"] in ("OK", "TIME_LIMIT") for r in records.values()), [r["message"] for r in records.values()]
    jobs = sorted({r["slurm_job_id"] for r in records.values()}, key=int)
    assert len(jobs) >= 2, "the suite ended before the walltime: make it longer"
    err = (out / "slurm-logs" / f"iosched-bench-{jobs[0]}.err").read_text()
    assert "DUE TO TIME LIMIT" in err
    assert f"Slurm job {jobs[0]} ended" in done.stderr
    assert _no_jobs_left(slurm)


def test_a_partition_slurm_refuses_stops_the_bench_before_any_task(slurm, tmp_path):
    suite = _suite(tmp_path, "w", WINDOW)
    with pytest.raises(SlurmError, match="Slurm refuses the worker job .*partition 'nope'.*[Ii]nvalid partition"):
        run_suite(suite, tmp_path / "out", slurm={**TWO_JOBS, "partition": "nope"}, progress=False)
    assert not list((tmp_path / "out" / "results").iterdir())
    assert not slurm.jobs()
    cli = subprocess.run([*IOSCHED, "bench", str(tmp_path / "w.toml"), "--out", str(tmp_path / "cli"), "--slurm",
                          "--slurm-opt", "partition=nope"], capture_output=True, text=True, timeout=120)
    assert cli.returncode == 2 and "nvalid partition" in cli.stderr and "Traceback" not in cli.stderr


def test_no_worker_within_the_start_timeout_cancels_the_pending_jobs(slurm, tmp_path):
    suite = _suite(tmp_path, "w", WINDOW)
    never = {**TWO_JOBS, "job_extra_directives": ["--begin=now+1hour"], "start_timeout": 3}
    with pytest.raises(SlurmError, match=r"no Slurm worker started within start_timeout = 3 s \(job \d+ PENDING"):
        run_suite(suite, tmp_path / "out", slurm=never, progress=False)
    assert _no_jobs_left(slurm, within=10)
    assert not list((tmp_path / "out" / "results").iterdir())


def test_a_newline_in_any_slurm_opt_or_slurm_table_is_refused_before_anything_is_submitted(slurm, tmp_path):
    good = tmp_path / "good.toml"
    good.write_text(GA.format(seeds=1, jobs=1, walltime="00:10:00", time_limit=1))
    for opt in ("partition=debug\n#SBATCH --exclusive\nhostname", "account=x\nid", "memory=1GB\n",
                "walltime=00:10:00\nid", "interface=lo\nid", "jobs=1\n#SBATCH --exclusive",
                'job_extra_directives=["--qos=x\\nhostname"]', 'job_script_prologue=["true\\n#SBATCH -N 9"]'):
        cli = subprocess.run([*IOSCHED, "bench", str(good), "--out", str(tmp_path / "o"), "--slurm", "--slurm-opt",
                              opt], capture_output=True, text=True, timeout=120)
        key = opt.split("=")[0]
        assert cli.returncode == 2 and "Traceback" not in cli.stderr, cli.stderr
        assert "a newline or another control character" in cli.stderr or f"bad {key} " in cli.stderr, cli.stderr
        assert not (tmp_path / "o").exists() and not slurm.jobs()
    bad = tmp_path / "bad.toml"
    bad.write_text(GA.format(seeds=1, jobs=1, walltime="00:10:00", time_limit=1).replace(
        'partition = "debug"', 'partition = "debug\\n#SBATCH --exclusive\\nhostname"'))
    cli = subprocess.run([*IOSCHED, "bench", str(bad), "--out", str(tmp_path / "o"), "--slurm"], capture_output=True,
                         text=True, timeout=120)
    assert cli.returncode == 2 and "bad.toml, line 13: [slurm]: bad partition" in cli.stderr, cli.stderr
    assert not (tmp_path / "o").exists() and not slurm.jobs()


def _refused_without_the_certificate(address: str) -> str:
    """How the scheduler at ``address`` answers TLS clients without its certificate: a plain TLS client (no
    certificate), a Dask client with a certificate of its own, a plain TCP client. Raises if one gets in."""
    import socket
    import ssl

    from distributed.security import Security

    from iosched.harness.tls import temporary_security

    host, port = address.removeprefix("tls://").rsplit(":", 1)
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    ctx.check_hostname, ctx.verify_mode = False, ssl.CERT_NONE
    with socket.create_connection((host, int(port)), timeout=10) as raw:
        try:
            with ctx.wrap_socket(raw) as tls:  # TLS 1.3: the server says no once it has seen no certificate
                tls.sendall(b"\x00" * 64)
                answer = tls.recv(64)
            assert answer == b"", f"a client without a certificate was answered {answer!r}"
            said = "closed"
        except (ssl.SSLError, ConnectionResetError) as e:
            said = str(e)
    with tempfile.TemporaryDirectory() as other:
        own, _ = temporary_security(Path(other))  # a certificate the scheduler never trusted
        own = Security(**{k: getattr(own, k) for k in ("tls_ca_file", "tls_client_cert", "tls_client_key")},
                       require_encryption=True)
        with pytest.raises((OSError, TimeoutError)):
            Client(address, security=own, timeout=5)
    with pytest.raises((OSError, TimeoutError)):
        Client(address.replace("tls://", "tcp://"), timeout=5)
    return said


def test_the_scheduler_takes_tls_only_on_one_address_and_refuses_a_client_without_its_certificate(slurm, tmp_path):
    import psutil

    path = tmp_path / "ga.toml"
    path.write_text(GA.format(seeds=2, jobs=1, walltime="00:10:00", time_limit=2).replace('interface = "lo"\n', ""))
    out = tmp_path / "out"
    proc = _bench([path, "--out", out, "--slurm", "--progress"])
    try:
        _wait_for_results(out, 1, proc)
        address = next(iter(_records(out).values()))["scheduler"]
        assert address.startswith("tls://") and not address.startswith(("tls://0.0.0.0", "tls://["))
        (folder,) = (out / "slurm-logs").glob(".tls-*")  # the certificate, readable by this user alone
        assert folder.stat().st_mode & 0o777 == 0o700 and (folder / "key.pem").stat().st_mode & 0o077 == 0
        listening = {c.laddr.ip for c in psutil.Process(proc.pid).net_connections("inet") if c.status == "LISTEN"}
        host = address.removeprefix("tls://").rsplit(":", 1)[0]
        assert listening == {host, "127.0.0.1"}, listening  # the scheduler on its address, HTTP on localhost only
        said = _refused_without_the_certificate(address)
        _, err = proc.communicate(timeout=300)
    finally:
        proc.kill()
    assert proc.returncode == 0, err[-2000:]
    assert f"Dask scheduler at {address}" in err and said
    assert {r["scheduler"] for r in _records(out).values()} == {address}
    assert all(r["status"] in ("OK", "TIME_LIMIT") for r in _records(out).values())
    assert not list((out / "slurm-logs").glob(".tls-*"))  # removed at the end
    assert _no_jobs_left(slurm)


def test_insecure_runs_on_plain_tcp_with_a_warning(slurm, tmp_path):
    path = tmp_path / "ga.toml"
    path.write_text(GA.format(seeds=1, jobs=1, walltime="00:10:00", time_limit=0.5))
    out = tmp_path / "out"
    done = subprocess.run([*IOSCHED, "bench", str(path), "--out", str(out), "--slurm", "--slurm-opt", "insecure=true"],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "warning: [slurm] insecure = true: the scheduler and the workers talk plain TCP" in done.stderr
    assert {r["scheduler"][:16] for r in _records(out).values()} == {"tcp://127.0.0.1:"}
    assert not list((out / "slurm-logs").glob(".tls-*"))
    assert _no_jobs_left(slurm)


# without Slurm: the options


def test_options_fill_defaults_and_name_a_bad_key_or_value():
    assert options({})["jobs"] == 2 and options({"start_timeout": 5})["start_timeout"] == 5.0
    for table, needle in [({"queue": "x"}, "unknown Slurm option 'queue'"), ({"jobs": 0}, "bad jobs 0"),
                          ({"jobs": "2"}, "jobs must be an int"), ({"walltime": "1h"}, "bad walltime '1h'"),
                          ({"memory": "lots"}, "bad memory 'lots'"), ({"cores": True}, "cores must be an int"),
                          ({"job_extra_directives": [1]}, "bad job_extra_directives")]:
        with pytest.raises(ParameterError, match=needle):
            options(table)
    assert [options({"walltime": w})["walltime"] for w in ("30", "00:30:00", "1-00", "2-12:00:00")]
    assert parse_opt("jobs=4") == ("jobs", 4) and parse_opt("partition=debug") == ("partition", "debug")
    assert parse_opt("walltime=00:10:00") == ("walltime", "00:10:00")
    assert parse_opt('job_extra_directives=["--qos=x"]') == ("job_extra_directives", ["--qos=x"])
    with pytest.raises(ParameterError, match="KEY=VALUE"):
        parse_opt("jobs")


def test_a_suite_slurm_table_is_checked_and_runs_locally_without_slurm(tmp_path):
    good = tmp_path / "good.toml"
    good.write_text(GA.format(seeds=1, jobs=2, walltime="00:10:00", time_limit=0.2))
    suite = load_suite(str(good))
    assert suite.slurm["jobs"] == 2
    counts = run_suite(suite, tmp_path / "out", workers=1, progress=False)  # [slurm] ignored without --slurm
    assert counts["done"] == len(suite.tasks) and counts["failed"] == 0
    assert not list((tmp_path / "out").glob("slurm-logs"))
    bad = tmp_path / "bad.toml"
    bad.write_text(GA.format(seeds=1, jobs=2, walltime="soon", time_limit=1))
    with pytest.raises(ParameterError, match=r"bad\.toml, line 1\d: \[slurm\]: bad walltime 'soon'"):
        load_suite(str(bad))
    cli = subprocess.run([*IOSCHED, "bench", str(good), "--out", str(tmp_path / "o"), "--slurm-opt", "jobs=1"],
                         capture_output=True, text=True, timeout=120)
    assert cli.returncode == 2 and "--slurm-opt is for --slurm only" in cli.stderr
    with pytest.raises(ParameterError, match="neither --scheduler nor --workers"):
        run_suite(suite, tmp_path / "o2", workers=2, slurm={}, progress=False)
    for opt, needle in [("jobs=0", "bad jobs 0"), ("queue=debug", "unknown Slurm option 'queue'"),
                        ("walltime=forever", "bad walltime 'forever'")]:
        cli = subprocess.run([*IOSCHED, "bench", str(good), "--out", str(tmp_path / "o3"), "--slurm",
                              "--slurm-opt", opt], capture_output=True, text=True, timeout=120)
        assert cli.returncode == 2 and needle in cli.stderr and "Traceback" not in cli.stderr, cli.stderr
    assert not (tmp_path / "o3").exists()  # refused before anything is written


# without Slurm: what reaches the job script (issue 49.1)

INJECTED = "debug\n#SBATCH --exclusive\nhostname"


def _script(opts: dict, log_dir="/tmp/logs") -> str:
    from dask_jobqueue.slurm import SLURMJob

    return SLURMJob("tcp://127.0.0.1:1", name="w", **job_options(opts, 1, Path(log_dir))).job_script()


def _header_ok(script: str) -> bool:
    """Every #SBATCH line comes before the first command, and no line but the worker's is a command."""
    lines = [line for line in script.splitlines()[1:] if line.strip()]
    return all(line.startswith("#SBATCH ") for line in lines[:-1]) and " -m distributed.cli.dask_worker " in lines[-1]


def test_the_injection_of_issue_49_is_real_without_the_check():
    # the options as SlurmWorkers passes them, unchecked: the newline writes a shell command into the header,
    # after which sbatch reads no #SBATCH line (cores, memory and walltime are lost)
    opts = {**{k: v[1] for k, v in KEYS.items()}, "partition": INJECTED}
    script = _script(opts)
    assert "\nhostname\n" in script and not _header_ok(script)
    assert _header_ok(_script(options({"partition": "debug"})))


@pytest.mark.parametrize("key, value", [
    ("partition", INJECTED), ("account", "proj\nrm -rf ~"), ("partition", "a b"), ("account", "x;y"),
    ("memory", "2GB\n"), ("memory", "2GB\n#SBATCH --exclusive"), ("memory", "0GB"), ("walltime", "00:10:00\nid"),
    ("job_extra_directives", ["--qos=debug\nhostname"]), ("job_extra_directives", ["--qos debug"]),
    ("job_extra_directives", ["-N1"]), ("job_extra_directives", ["#SBATCH --x"]),
    ("job_script_prologue", ["module load python\n#SBATCH --exclusive"]), ("job_script_prologue", ["#SBATCH -N 9"]),
    ("job_script_prologue", ["a\rb"]), ("interface", "lo\nid"), ("interface", "eth0 id"),
])
def test_a_value_slurm_would_not_take_in_the_job_script_is_refused_naming_its_key(key, value):
    with pytest.raises(ParameterError, match=f"bad {key} "):
        options({key: value})


@pytest.mark.parametrize("key", ["partition", "account", "memory", "walltime", "interface", "jobs", "cores",
                                 "job_extra_directives", "job_script_prologue", "retries"])
def test_a_newline_in_any_slurm_opt_is_refused(key):
    with pytest.raises(ParameterError, match="a newline or another control character"):
        parse_opt(f"{key}=1\n#SBATCH --exclusive")


def test_an_interface_this_host_does_not_have_is_refused():
    check_interface("lo")
    check_interface(None)
    with pytest.raises(ParameterError, match="'nope0' is not a network interface of this host; its interfaces: .*lo"):
        check_interface("nope0")


def test_an_out_folder_the_job_script_cannot_hold_is_refused():
    check_paths(Path("runs/a-1_b.c/x"), Path("/scratch/u@x/r+2"))
    for bad in ("runs/a b", "runs/a\n#SBATCH x", "runs/%j", "runs/'x'", "runs/$(id)"):
        with pytest.raises(ParameterError, match="--out .*goes into the Slurm job script"):
            check_paths(Path(bad))


@settings(max_examples=150, deadline=None)
@given(key=st.sampled_from(["partition", "account", "memory", "walltime", "interface"]),
       value=st.text(st.characters(codec="utf-8"), min_size=0, max_size=30))
def test_whatever_string_a_key_is_given_the_job_script_keeps_its_header(key, value):
    try:
        opts = options({key: value})
    except ParameterError:
        return
    assert _header_ok(_script(opts))


@settings(max_examples=100, deadline=None)
@given(key=st.sampled_from(["job_extra_directives", "job_script_prologue"]),
       value=st.lists(st.text(st.characters(codec="utf-8"), max_size=20), max_size=3))
@example(key="job_script_prologue", value=["\x85"])  # a line break to Python's splitlines (NEL), not to bash
def test_whatever_lines_are_given_the_job_script_keeps_its_header(key, value):
    try:
        opts = options({key: value})
    except ParameterError:
        return
    script = _script(opts)
    lines = [line for line in script.splitlines()[1:] if line.strip()]
    n_header = sum(1 for line in lines if line.startswith("#SBATCH "))
    expected = len(value) if key == "job_extra_directives" else 0
    assert n_header == 7 + expected  # -J, -e, -o, -n, --cpus-per-task, --mem, -t and the extra ones
    assert all(line.startswith("#SBATCH ") for line in lines[:n_header])  # no command among the directives
    kept = [line for line in value if line]  # (dask-jobqueue drops empty ones)
    if key == "job_script_prologue" and kept:  # each given line is one line of the script, after the directives
        assert script.splitlines()[-1 - len(kept):-1] == kept


def test_the_dashboard_and_insecure_options_are_typed():
    assert options({})["dashboard"] is None and options({})["insecure"] is False
    assert options({"dashboard": "127.0.0.1:8787"})["dashboard"] == "127.0.0.1:8787"
    assert parse_opt("insecure=true") == ("insecure", True) and options({"insecure": True})["insecure"] is True
    for table, needle in [({"insecure": "yes"}, "insecure must be a bool"),
                          ({"insecure": 1}, "insecure must be a bool"), ({"dashboard": "8787"}, "bad dashboard '8787'"),
                          ({"dashboard": "localhost:1\nid"}, "bad dashboard")]:
        with pytest.raises(ParameterError, match=needle):
            options(table)
