import os

try:  # the test extra installs Hypothesis; the docs check also runs without it (a README-only install, .ci/run)
    from hypothesis import HealthCheck, settings
except ImportError:
    settings = None

if os.environ.get("PYTEST_XDIST_WORKER"):
    # one BLAS/OpenMP thread per xdist worker: two workers on two cores with a multi-threaded
    # BLAS each would oversubscribe the machine (and double the wall time of every call that the
    # Hypothesis deadlines of the trust suites measure)
    for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ.setdefault(var, "1")  # for libraries loaded from here on
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:  # threadpoolctl comes with scikit-learn (test extra); without it, no limit
        pass
    else:
        threadpool_limits(1)  # for those already loaded (numpy's, through the pytest plugin)

if settings is not None:
    settings.register_profile(
        "dpaudit",
        deadline=None,
        max_examples=60,
        suppress_health_check=[HealthCheck.too_slow],
        derandomize=True,
    )
    settings.register_profile("ci", parent=settings.get_profile("dpaudit"), max_examples=60)
    settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "dpaudit"))
