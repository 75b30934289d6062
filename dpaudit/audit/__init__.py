"""Empirical auditing: epsilon lower bounds, labelled estimates, Renyi divergence estimation.

    audit_mechanism(sampler, x, x_prime, *, epsilon, delta=0.0, trials=10_000, confidence=0.95,
                    statistic=None, seed=None) -> AuditResult
    audit_optimizer(name_or_optimizer, *, trials=10_000, confidence=0.95, seed=None, **options) -> AuditResult
    renyi_divergence(samples_p, samples_q, alpha, *, method="gaussian", confidence=0.95, seed=None) -> Estimate

Lower bounds (``AuditResult.epsilon_lower`` with a threshold or one-run method) hold with
probability >= confidence for every mechanism; GDP numbers are estimates labelled with their
assumption (auditing.md sec. 4). See the modules for the statistics used. Trials run in
seed-deterministic chunks on any ``concurrent.futures`` executor (``workers=N``, ``executor=``;
:mod:`dpaudit.audit.runner`, docs/scaling.md): the result never depends on where they ran.
"""

from dpaudit._lazy import make_getattr

_EXPORTS = {
    "audit_mechanism": "dpaudit.audit.mechanism",
    "audit_scores": "dpaudit.audit.mechanism",
    "audit_optimizer": "dpaudit.audit.optimizer",
    "renyi_divergence": "dpaudit.audit.renyi",
    "AuditResult": "dpaudit.audit.result",
    "Estimate": "dpaudit.audit.result",
    "cp_upper": "dpaudit.audit.binomial",
    "cp_lower": "dpaudit.audit.binomial",
    "epsilon_lower_from_rates": "dpaudit.audit.bounds",
    "epsilon_lower_from_counts": "dpaudit.audit.bounds",
    "mu_lower_from_counts": "dpaudit.audit.gdp",
    "gdp_epsilon_of": "dpaudit.audit.gdp",
    "heldout_test": "dpaudit.audit.thresholds",
    "bonferroni_test": "dpaudit.audit.thresholds",
    "one_run_epsilon_lower": "dpaudit.audit.one_run",
    "one_run_p_value": "dpaudit.audit.one_run",
    "one_run_audit": "dpaudit.audit.one_run",
    "run_chunks": "dpaudit.audit.runner",
    "run_jobs": "dpaudit.audit.runner",
    "ChunkError": "dpaudit.audit.runner",
    "ProcessPool": "dpaudit.audit.runner",
    "InProcessExecutor": "dpaudit.audit.runner",
    "linear_instance_table": "dpaudit.audit.linear_instance",
    "simulate_noisy_gd": "dpaudit.audit.linear_instance",
}
__all__ = sorted(_EXPORTS)
__getattr__ = make_getattr(__name__, _EXPORTS)


def __dir__():
    return sorted(set(globals()) | set(_EXPORTS))
