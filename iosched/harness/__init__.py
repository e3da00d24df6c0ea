"""The benchmark harness: suites (:mod:`~iosched.harness.suite`), resumable runs
(:mod:`~iosched.harness.runner`) and their report (:mod:`~iosched.harness.report`).

The papers' reproductions are in :mod:`iosched.reproduce`.
"""
