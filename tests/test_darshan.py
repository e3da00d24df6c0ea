"""Instances from real Darshan logs: every log PyDarshan ships and every log in ../shared/data/darshan
(where present) imported for each problem, or refused with an error naming the log and what it lacks;
the imported instances solved by cheap methods (the exact model on a few) and accepted by the evaluator.
The filedomain region of ior_hdf5_example.darshan is checked against PyDarshan's own DXT records."""

import hashlib
import json
import os
import re
import shutil
from pathlib import Path

import pytest

darshan = pytest.importorskip("darshan")

import iosched  # noqa: E402
from iosched.cli import main  # noqa: E402
from iosched.errors import InstanceError, ParameterError  # noqa: E402
from iosched.importers import darshan as dx  # noqa: E402
from iosched.instances import filedomain, forwarding, periodic  # noqa: E402

WHEEL = Path(darshan.__file__).parent
SHARED = Path(__file__).resolve().parents[1] / ".." / "shared" / "data" / "darshan"
LOGS = sorted(WHEEL.rglob("*.darshan")) + (sorted(SHARED.resolve().rglob("*.darshan")) if SHARED.is_dir() else [])
IDS = [str(p.relative_to(WHEEL if p.is_relative_to(WHEEL) else SHARED.resolve())) for p in LOGS]
IOR = WHEEL / "examples" / "example_logs" / "ior_hdf5_example.darshan"
PLATFORM = {"stripe_size": 2**20, "stripe_count": 4, "aggregators": 4}  # what a log without LUSTRE or DXT lacks

# Every refusal says which log and one of these causes (anything else is a bug in the importer).
REASONS = {
    "filedomain": r"single-process job|no shared file is written by all|no file is written|no LUSTRE striping|"
                  r"no host names|no DXT_MPIIO, DXT_POSIX or POSIX records|is partial",
    "forwarding": r"no POSIX records|no bytes read or written|is negative",
    "periodic": r"no DXT timeline|is partial|no compute time|holds no read or write",
}


@pytest.fixture(scope="module")
def logs():
    """Each log read once (all modules the importers use), or the InstanceError reading it raised."""
    out = {}
    for p in LOGS:
        try:
            out[p] = dx.read(p)
        except InstanceError as e:
            out[p] = e
    return out


def _raw_modules(path):
    """The log's modules as PyDarshan itself lists them (name -> partial flag), apart from the importer."""
    return {m: v["partial_flag"] for m, v in darshan.DarshanReport(str(path), read_all=False).modules.items()}


def _import(problem, log, **params):
    build = {"filedomain": filedomain, "forwarding": forwarding, "periodic": periodic}[problem].from_darshan
    return build(log, **params)


def _check_instance(problem, inst, path):
    prov = inst.provenance
    entries = {"filedomain": [prov], "forwarding": prov.get("jobs"), "periodic": prov.get("applications")}[problem]
    assert entries[0]["log"] == path.name
    assert entries[0]["sha256"] == hashlib.sha256(path.read_bytes()).hexdigest()
    assert prov["assumed"]
    back = type(inst).from_json(inst.to_json())
    assert back == inst and back.provenance == prov  # the instance and its provenance round-trip through JSON


@pytest.mark.parametrize("path", LOGS, ids=IDS)
def test_every_log_imports_or_is_refused_for_each_problem(path, logs):
    log = logs[path]
    assert not isinstance(log, InstanceError), log  # every shipped and shared log is a readable Darshan log
    raw = _raw_modules(path)
    results = {}
    for problem, params in (("filedomain", {}), ("forwarding", {}), ("periodic", {"bandwidth": 3.0})):
        try:
            inst = _import(problem, log, **params)
        except InstanceError as e:
            assert path.name in str(e) and re.search(REASONS[problem], str(e)), (problem, str(e))
            results[problem] = None
            continue
        _check_instance(problem, inst, path)
        results[problem] = inst
    dxt = [m for m in dx.DXT_MODULES if m in raw]
    # periodic: a log imports exactly when PyDarshan lists a complete DXT module with a byte moved
    if results["periodic"] is None:
        assert not dxt or any(raw[m] for m in dxt) or sum(
            int(r.writes[:, 1].sum() + r.reads[:, 1].sum()) for m in dxt for r in log.dxt.get(m, ())) == 0
    else:
        assert dxt and not any(raw[m] for m in dxt)
    # forwarding: never without the POSIX module; filedomain: never from a single process
    if "POSIX" not in raw:
        assert results["forwarding"] is None
    if log.nprocs == 1:
        assert results["filedomain"] is None
    # the cheap methods on what imported: the evaluator accepts their solutions
    for problem, method in (("filedomain", "even"), ("forwarding", "dfra"), ("forwarding", "fixed"),
                            ("periodic", "persched")):
        if results[problem] is not None:
            r = iosched.solve(problem, results[problem], method, attach_bound=False)
            if r.status.value == "error":  # PerSched's own limit: I/O times below 1e-7 of its period (1-byte writes)
                assert problem == "periodic" and "are doubles and cannot place it" in r.info["error"], r.info
                continue
            assert r.evaluation is not None and r.evaluation.feasible, (problem, method, r.status, r.info)


@pytest.mark.parametrize("path", [p for p in LOGS if "release_logs" in str(p) or "example_logs" in str(p)],
                         ids=[i for p, i in zip(LOGS, IDS) if "release_logs" in str(p) or "example_logs" in str(p)])
def test_filedomain_with_the_platform_given(path, logs):
    """With the striping and cb_nodes given, a log of a file written by every rank imports; the rest is refused."""
    log = logs[path]
    try:
        inst = filedomain.from_darshan(log, **PLATFORM)
    except InstanceError as e:
        assert path.name in str(e) and re.search(REASONS["filedomain"], str(e))
        assert not re.search("no LUSTRE striping|no host names", str(e))  # the parameters replace them
        return
    _check_instance("filedomain", inst, path)
    assert inst.aggregators == 4
    r = iosched.solve("filedomain", inst, "even", attach_bound=False)
    assert r.evaluation.feasible


def test_ior_hdf5_region_is_the_one_pydarshan_records_give():
    """The region, each rank's pieces and the striping, read from PyDarshan's records directly."""
    report = darshan.DarshanReport(str(IOR), read_all=True)
    records = report.records["DXT_MPIIO"].to_df()
    pieces = {}
    for rec in records:
        seg = rec["write_segments"]
        pieces.setdefault(rec["rank"], []).extend(zip(seg["offset"].astype(int), seg["length"].astype(int)))
    lo = min(o for ps in pieces.values() for o, _ in ps)
    hi = max(o + n for ps in pieces.values() for o, n in ps)
    lustre = report.records["LUSTRE"].to_df()["components"]
    inst = filedomain.from_darshan(IOR)
    assert (inst.region_offset, inst.region_end) == (lo, hi) == (0, 4196352)
    assert [sorted(r) for r in inst.requests] == [sorted(pieces[k]) for k in range(4)]
    assert sum(n for ps in pieces.values() for _, n in ps) == 4195800  # the figure, overwrites included
    assert inst.stripe_size == int(lustre["LUSTRE_COMP_STRIPE_SIZE"].iloc[0]) == 2**20
    assert inst.stripe_count == int(lustre["LUSTRE_COMP_STRIPE_COUNT"].iloc[0])
    assert not inst.full and inst.data_bytes < inst.region_length  # the holes are kept
    gaps, reach = [], lo
    for o, n in sorted(p for ps in pieces.values() for p in ps):
        if o > reach:
            gaps.append([reach, o])
        reach = max(reach, o + n)
    assert inst.provenance["holes"] == gaps == [[1400, 2048]] and inst.provenance["hole_count"] == 1
    assert inst.provenance["file"] == report.name_records[records[0]["id"]]


def test_exact_models_on_imported_instances():
    """The exact model of each problem on an imported instance: a status and a value the evaluator accepts."""
    fd = filedomain.from_darshan(IOR, aggregators=4)
    r = iosched.solve("filedomain", fd, "exact", profile="quick")
    assert r.status.value == "optimal" and r.evaluation.feasible
    even = iosched.solve("filedomain", fd, "even")
    assert r.objective <= even.objective + 1e-12  # exact never worse than ROMIO's even partitioning
    pair = SHARED / "ior_pnetcdf_hdf5"
    if pair.is_dir():
        fw = forwarding.from_darshan(pair)
        assert len(fw.jobs) == 2
        r = iosched.solve("forwarding", fw, "milp", profile="quick")
        assert r.status.value == "optimal" and r.evaluation.feasible
    rel = SHARED / "release_logs" / "mpi-io-test-ppc64-3.1.4.darshan"
    pe = periodic.from_darshan(rel if rel.is_file() else IOR, bandwidth=3.0)
    r = iosched.solve("periodic", pe, "milp", profile="quick")
    assert r.evaluation.feasible and r.bound is not None and r.objective <= r.bound + 1e-9


def test_folders_become_batches_and_refused_logs_are_listed(tmp_path):
    for name in ("ior_hdf5_example.darshan", "noposix.darshan", "dxt.darshan"):
        shutil.copy(WHEEL / "examples" / "example_logs" / name, tmp_path / name)
    fw = forwarding.from_darshan(tmp_path)
    assert len(fw.jobs) == 2 and [r["log"] for r in fw.provenance["refused"]] == ["noposix.darshan"]
    starts = [j["arrival_s"] for j in fw.provenance["jobs"]]
    assert starts == sorted(starts) and starts[0] == 0  # arrival order
    assert [j.start for j in fw.jobs] == [0, fw.jobs[0].nodes]  # side by side
    pe = periodic.from_darshan(tmp_path, bandwidth=3.0)
    assert [a.processors for a in pe.applications] == [1, 4]  # dxt (1 process), ior_hdf5 (4); noposix refused
    assert pe.platform.processors == 5 and len(pe.provenance["refused"]) == 1


def test_bad_and_partial_logs_are_refused_with_the_cause(tmp_path):
    trunc, text, empty = tmp_path / "trunc.darshan", tmp_path / "text.darshan", tmp_path / "empty.darshan"
    trunc.write_bytes(IOR.read_bytes()[:3000])
    text.write_text("not a log\n")
    empty.write_bytes(b"")
    with pytest.raises(InstanceError, match="trunc.darshan: module DXT_MPIIO cannot be read"):
        filedomain.from_darshan(trunc)
    for bad in (text, empty):
        for problem in ("filedomain", "forwarding"):
            with pytest.raises(InstanceError, match=f"{bad.name} is not a readable Darshan log"):
                _import(problem, bad)
    with pytest.raises(InstanceError, match="no such Darshan log"):
        forwarding.from_darshan(tmp_path / "missing.darshan")
    with pytest.raises(InstanceError, match=r"file 'nothere.h5' is not a file the log shows written"):
        filedomain.from_darshan(IOR, file="nothere.h5")
    with pytest.raises(InstanceError, match="dxt.darshan: a single-process job"):
        filedomain.from_darshan(WHEEL / "examples" / "example_logs" / "dxt.darshan")
    with pytest.raises(ParameterError, match="needs bandwidth"):
        periodic.from_darshan(IOR)
    partial = SHARED / "partial_data_dxt" / "partial_data_dxt.darshan"
    if partial.is_file():
        with pytest.raises(InstanceError, match="DXT_MPIIO is partial"):
            periodic.from_darshan(partial, bandwidth=1.0)


def test_logs_that_crash_libdarshan_util_are_refused(tmp_path, monkeypatch):
    """ior_hdf5_example cut at these lengths made libdarshan-util abort or segfault when PyDarshan closed
    it (measured: SIGSEGV, SIGABRT, SIGSEGV): read in a child process, each is an InstanceError here."""
    for cut in (500, 650, 800):
        path = tmp_path / f"cut{cut}.darshan"
        path.write_bytes(IOR.read_bytes()[:cut])
        with pytest.raises(InstanceError, match=f"cut{cut}.darshan: module POSIX cannot be read"):
            dx.read(path)
    monkeypatch.setattr(dx, "_read", lambda path, modules: os._exit(70))  # the child dies while reading
    with pytest.raises(InstanceError, match="ior_hdf5_example.darshan: libdarshan-util crashed reading it"):
        dx.read(IOR)


def test_a_reader_that_crashes_leaves_no_core_file(tmp_path, monkeypatch):
    """With core dumps on (ulimit -c unlimited), an abort of libdarshan-util left a 76 MB core in the working
    folder (issue 49.8): the reader's child runs with RLIMIT_CORE 0."""
    import resource

    monkeypatch.setattr(dx, "_read", lambda path, modules: resource.getrlimit(resource.RLIMIT_CORE))
    assert dx.read(IOR) == (0, 0)  # what the child's _read saw
    soft, hard = resource.getrlimit(resource.RLIMIT_CORE)
    if hard != resource.RLIM_INFINITY and hard < 2**30:
        pytest.skip(f"core dumps cannot be turned on here (hard limit {hard})")
    resource.setrlimit(resource.RLIMIT_CORE, (hard, hard))
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(dx, "_read", lambda path, modules: os.abort())
    try:
        with pytest.raises(InstanceError, match="libdarshan-util crashed reading it"):
            dx.read(IOR)
    finally:
        resource.setrlimit(resource.RLIMIT_CORE, (soft, hard))
    assert not [p.name for p in tmp_path.iterdir() if p.name.startswith("core")]


def test_cli_import_then_solve(tmp_path, capsys):
    out = tmp_path / "fd.json"
    assert main(["import", "darshan", str(IOR), "--problem", "filedomain", "--out", str(out),
                 "--param", "aggregators=4"]) == 0
    assert "assumed: " in capsys.readouterr().err
    assert json.loads(out.read_text())["provenance"]["log"] == IOR.name
    assert main(["solve", "filedomain", str(out), "--method", "exact", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["status"] == "optimal"
    assert main(["import", "darshan", str(IOR), "--problem", "periodic", "--param", "bandwidth=3"]) == 0
    assert json.loads(capsys.readouterr().out)["applications"][0]["processors"] == 4
    for argv, message in (
            ([str(WHEEL / "examples" / "example_logs" / "noposix.darshan"), "--problem", "forwarding"],
             "noposix.darshan: no POSIX records"),
            ([str(IOR), "--problem", "periodic"], "needs bandwidth"),
            ([str(IOR), "--problem", "filedomain", "--param", "foo=1"], "--param foo: not a parameter"),
            ([str(IOR), "--problem", "forwarding", "--file", "x"], "--file applies to --problem filedomain"),
            ([str(WHEEL / "examples" / "example_logs"), "--problem", "filedomain"], "takes one log")):
        assert main(["import", "darshan", *argv]) == 2
        assert message in capsys.readouterr().err
