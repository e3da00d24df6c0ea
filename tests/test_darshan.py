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
from iosched.instances import filedomain_darshan, forwarding_darshan, periodic  # noqa: E402

WHEEL = Path(darshan.__file__).parent
SHARED = Path(__file__).resolve().parents[1] / ".." / "shared" / "data" / "darshan"
LOGS = sorted(WHEEL.rglob("*.darshan")) + (sorted(SHARED.resolve().rglob("*.darshan")) if SHARED.is_dir() else [])
IDS = [str(p.relative_to(WHEEL if p.is_relative_to(WHEEL) else SHARED.resolve())) for p in LOGS]
IOR = WHEEL / "examples" / "example_logs" / "ior_hdf5_example.darshan"
PLATFORM = {"stripe_size": 2**20, "stripe_count": 4, "aggregators": 4}  # what a log without LUSTRE or DXT lacks
RELEASE = SHARED / "release_logs"

# Every refusal says which log and one of these causes (anything else is a bug in the importer).
REASONS = {
    "filedomain": r"single-process job|no shared file is written by all|no file is written|"
                  r"no DXT_MPIIO, DXT_POSIX or POSIX records|is partial",
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


def _written_by_every_rank(path) -> bool:
    """Whether PyDarshan's own records show a file written by every rank: a POSIX record reduced to rank -1
    with bytes written, or DXT write segments of one file from every rank (read apart from the importer)."""
    report = darshan.DarshanReport(str(path), read_all=False)
    nprocs = report.metadata["job"]["nprocs"]
    if "POSIX" in report.modules:
        report.mod_read_all_records("POSIX", warnings=False)
        df = report.records["POSIX"].to_df()["counters"]
        if ((df["rank"] == -1) & (df["POSIX_BYTES_WRITTEN"] > 0)).any():
            return True
    for mod in ("DXT_POSIX", "DXT_MPIIO"):
        if mod in report.modules:
            report.mod_read_all_dxt_records(mod, warnings=False)
            ranks: dict = {}
            for rec in report.records[mod].to_df():
                if len(rec["write_segments"]):
                    ranks.setdefault(rec["id"], set()).add(rec["rank"])
            if any(len(r) >= nprocs for r in ranks.values()):
                return True
    return False


def _import(problem, log, **params):
    module = {"filedomain": filedomain_darshan, "forwarding": forwarding_darshan, "periodic": periodic}[problem]
    build = module.from_darshan
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
    # filedomain with nothing given: imports every log with a file written by every rank (a complete DXT
    # trace where there is one), the striping from LUSTRE or from the mount table's file system
    complete = not any(raw[m] for m in dx.DXT_MODULES if m in raw)
    assert (results["filedomain"] is not None) == (log.nprocs > 1 and complete and _written_by_every_rank(path))
    if results["filedomain"] is not None:
        fd = results["filedomain"]
        assert "striping" in fd.provenance["assumed"] and "aggregator" in fd.provenance["assumed"]
        assert fd.provenance["mount"] == (list(log.mount(fd.provenance["file"])) if log.mount(fd.provenance["file"])
                                          else None)
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
    """With the striping and cb_nodes given, a log of a file written by every rank imports with them where the
    log holds no striping; where it does (a LUSTRE record, a GPFS block size) and says otherwise, the given
    value is a ParameterError naming both, never dropped; the rest is refused for what the log lacks."""
    log = logs[path]
    try:
        inst = filedomain_darshan.from_darshan(log, **PLATFORM)
    except ParameterError as e:
        assert path.name in str(e) and re.search(r"stripe_(size|count)=\d+ given, but the log holds", str(e))
        assert log.lustre or log.mount(re.search(r"for '([^']+)'", str(e)).group(1))[1] == "gpfs"
        return
    except InstanceError as e:
        assert path.name in str(e) and re.search(REASONS["filedomain"], str(e))
        return
    _check_instance("filedomain", inst, path)
    assert (inst.aggregators, inst.stripe_size, inst.stripe_count) == (4, 2**20, 4)
    assert "stripe_size 1048576, stripe_count 4 given" in inst.provenance["assumed"]
    r = iosched.solve("filedomain", inst, "even", attach_bound=False)
    assert r.evaluation.feasible


def test_darshan_mount_is_the_longest_path_prefix():
    log = dx.DarshanLog(Path("x.darshan"), "", 1, 4, 0.0, 1.0, 1.0, "", {},
                        mounts=(("/", "ext4"), ("/home", "nfs"), ("/home/lus", "lustre"), ("/gpfs/fs0", "gpfs")))
    assert log.mount("/home/lus/a/b") == ("/home/lus", "lustre")
    assert log.mount("/home/lust/a") == ("/home", "nfs")  # a prefix of the name, not of the path
    assert log.mount("/gpfs/fs0") == ("/gpfs/fs0", "gpfs")
    assert log.mount("/gpfs/fs01/x") == ("/", "ext4")
    assert dx.DarshanLog(Path("x.darshan"), "", 1, 4, 0.0, 1.0, 1.0, "", {}).mount("/a") is None


@pytest.mark.skipif(not RELEASE.is_dir(), reason="Darshan's release logs (../shared/data/darshan) are not here")
def test_filedomain_striping_from_the_mount_table():
    """No LUSTRE record: the file system of the mount holding the file, with its stated defaults."""
    gpfs = filedomain_darshan.from_darshan(RELEASE / "mpi-io-test-ppc64-3.1.2.darshan")
    report = darshan.DarshanReport(str(RELEASE / "mpi-io-test-ppc64-3.1.2.darshan"), read_all=True)
    posix = report.records["POSIX"].to_df()["counters"]
    block = int(posix.loc[posix["POSIX_BYTES_WRITTEN"] > 0, "POSIX_FILE_ALIGNMENT"].iloc[0])
    assert block == 8 * 2**20  # Mira's /gpfs/mira-fs0: 8 MiB blocks
    assert (gpfs.stripe_size, gpfs.stripe_count, gpfs.locking, gpfs.block_size) == (block, 1, "token", block)
    assert gpfs.provenance["mount"] == ["/gpfs/mira-fs0", "gpfs"]
    assert "GPFS block size" in gpfs.provenance["assumed"] and "NSD servers" in gpfs.provenance["assumed"]
    assert gpfs.aggregators == 4 and "1 process per node (assumed" in gpfs.provenance["assumed"]
    for log, mount in (("mpi-io-test-x86_64-3.4.5.darshan", ["/", "ext4"]),
                       ("mpi-io-test-ppc64-3.1.6.darshan", ["/projects", "nfs"])):
        inst = filedomain_darshan.from_darshan(RELEASE / log)
        assert (inst.stripe_size, inst.stripe_count, inst.first_server, inst.locking) == (2**20, 1, 0, "extent")
        assert inst.provenance["mount"] == mount
        assert f"no striping: the file is on {mount[1]} at {mount[0]}" in inst.provenance["assumed"]
    two = filedomain_darshan.from_darshan(RELEASE / "mpi-io-test-x86_64-3.4.5.darshan", procs_per_node=2,
                                          stripe_count=4)
    assert two.aggregator_nodes == (0, 1) and two.stripe_count == 4
    assert "2 processes per node (given" in two.provenance["assumed"] and "stripe_count 4 given" in \
        two.provenance["assumed"]
    # on Lustre without a LUSTRE record (the module off, or a log before Darshan 3.4.6): Lustre's default layout
    log = dx.read(RELEASE / "mpi-io-test-x86_64-3.5.0.darshan")
    held = filedomain_darshan.from_darshan(log)
    assert held.provenance["modules"] == ["LUSTRE", "POSIX"] and held.provenance["mount"] == ["/home", "lustre"]
    log.lustre = {}
    bare = filedomain_darshan.from_darshan(log)
    assert (bare.stripe_size, bare.stripe_count) == (2**20, 1) and "LUSTRE" not in bare.provenance["modules"]
    assert "Lustre's default layout" in bare.provenance["assumed"]


def test_a_given_parameter_the_log_contradicts_is_an_error():
    """A LUSTRE record's striping, a GPFS block size and DXT host names win over nothing silently: a given
    value that differs is a ParameterError naming the parameter and the log's value; an equal one is fine."""
    with pytest.raises(ParameterError, match=r"ior_hdf5_example.darshan: stripe_count=4 given, but the log holds "
                                             r"stripe_count 1"):
        filedomain_darshan.from_darshan(IOR, stripe_count=4)
    with pytest.raises(ParameterError, match=r"first_server=1 given, but the log holds first_server 0"):
        filedomain_darshan.from_darshan(IOR, first_server=1)
    with pytest.raises(ParameterError, match=r"procs_per_node=2 given, but the log's DXT host names"):
        filedomain_darshan.from_darshan(IOR, procs_per_node=2)
    same = filedomain_darshan.from_darshan(IOR, stripe_size=2**20, stripe_count=1, locking="token")
    assert (same.stripe_count, same.locking) == (1, "token")
    assert "stripe_size 1048576, stripe_count 1, locking token given" in same.provenance["assumed"]
    gpfs = RELEASE / "mpi-io-test-ppc64-3.1.2.darshan"
    if gpfs.is_file():
        with pytest.raises(ParameterError, match=r"stripe_size=1048576 given, but the log holds stripe_size 8388608"):
            filedomain_darshan.from_darshan(gpfs, stripe_size=2**20)
        assert filedomain_darshan.from_darshan(gpfs, stripe_count=16, locking="extent").stripe_count == 16


def test_partial_modules_summed_into_a_forwarding_job_are_named():
    """Darshan's record limit (1,024 per module by default) leaves a module partial: summed as it is, named."""
    log = dx.read(IOR, ("POSIX", "STDIO", "MPI-IO"))
    whole = forwarding_darshan.from_darshan(log)
    assert "partial" not in whole.provenance["assumed"] and whole.provenance["jobs"][0]["partial"] == []
    log.modules["POSIX"]["partial"] = True  # as a log of more files than Darshan keeps records for would say
    cut = forwarding_darshan.from_darshan(log)
    assert "partial modules summed as they are" in cut.provenance["assumed"]
    assert f"{IOR.name} (POSIX)" in cut.provenance["assumed"] and cut.provenance["jobs"][0]["partial"] == ["POSIX"]
    stdio = SHARED / "partial_data_stdio" / "partial_data_stdio.darshan"
    if stdio.is_file():
        assert _raw_modules(stdio)["STDIO"]  # PyDarshan flags it partial
        inst = forwarding_darshan.from_darshan(stdio)
        assert "partial_data_stdio.darshan (STDIO)" in inst.provenance["assumed"]


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
    inst = filedomain_darshan.from_darshan(IOR)
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
    fd = filedomain_darshan.from_darshan(IOR, aggregators=4)
    r = iosched.solve("filedomain", fd, "exact", profile="quick")
    assert r.status.value == "optimal" and r.evaluation.feasible
    even = iosched.solve("filedomain", fd, "even")
    assert r.objective <= even.objective + 1e-12  # exact never worse than ROMIO's even partitioning
    pair = SHARED / "ior_pnetcdf_hdf5"
    if pair.is_dir():
        fw = forwarding_darshan.from_darshan(pair)
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
    fw = forwarding_darshan.from_darshan(tmp_path)
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
        filedomain_darshan.from_darshan(trunc)
    for bad in (text, empty):
        for problem in ("filedomain", "forwarding"):
            with pytest.raises(InstanceError, match=f"{bad.name} is not a readable Darshan log"):
                _import(problem, bad)
    with pytest.raises(InstanceError, match="no such Darshan log"):
        forwarding_darshan.from_darshan(tmp_path / "missing.darshan")
    with pytest.raises(InstanceError, match=r"file 'nothere.h5' is not a file the log shows written"):
        filedomain_darshan.from_darshan(IOR, file="nothere.h5")
    with pytest.raises(InstanceError, match="dxt.darshan: a single-process job"):
        filedomain_darshan.from_darshan(WHEEL / "examples" / "example_logs" / "dxt.darshan")
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
    rel = RELEASE / "mpi-io-test-x86_64-3.4.5.darshan"
    if rel.is_file():  # nothing given, no LUSTRE record: the mount table's file system and its defaults
        assert main(["import", "darshan", str(rel), "--problem", "filedomain"]) == 0
        cap = capsys.readouterr()
        assert "no striping: the file is on ext4 at /)" in cap.err
        assert json.loads(cap.out)["striping"]["stripe_count"] == 1
    assert main(["import", "darshan", str(IOR), "--problem", "periodic", "--param", "bandwidth=3"]) == 0
    assert json.loads(capsys.readouterr().out)["applications"][0]["processors"] == 4
    for argv, message in (
            ([str(WHEEL / "examples" / "example_logs" / "noposix.darshan"), "--problem", "forwarding"],
             "noposix.darshan: no POSIX records"),
            ([str(IOR), "--problem", "periodic"], "needs bandwidth"),
            ([str(IOR), "--problem", "filedomain", "--param", "foo=1"], "--param foo: not a parameter"),
            ([str(IOR), "--problem", "forwarding", "--file", "x"], "--file applies to --problem filedomain"),
            ([str(IOR), "--problem", "filedomain", "--param", "stripe_count=4"],
             "stripe_count=4 given, but the log holds stripe_count 1"),
            ([str(WHEEL / "examples" / "example_logs"), "--problem", "filedomain"], "takes one log")):
        assert main(["import", "darshan", *argv]) == 2
        assert message in capsys.readouterr().err
