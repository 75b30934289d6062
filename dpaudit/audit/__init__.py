"""Empirical auditing: epsilon lower bounds, labelled estimates, Renyi divergence estimation.

    audit_mechanism(sampler, x, x_prime, *, epsilon, delta=0.0, trials=10_000, confidence=0.95,
                    statistic="auto", seed=None, pairs=None, encode=None, neighbouring=None,
                    claim_neighbouring=None, progress=None, ...) -> AuditResult
    audit_optimizer(name_or_optimizer, *, trials=10_000, confidence=0.95, seed=None, progress=None,
                    **options) -> AuditResult
    audit_scores(sel0, sel1, eval0=None, eval1=None, *, epsilon, delta=0.0, confidence=0.95) -> AuditResult
    audit_training(train_fn, *, canaries=1000, claim=None, mode="one_run"|"many_runs", trials=None, seed=None,
                   workers=None, progress=None, ...) -> AuditResult     # your own training loop
    audit_one_run(run, *, canaries=1000, claim=None, repeats=1, ...) -> AuditResult  # one-run, states its ceiling
    renyi_divergence(samples_p, samples_q, alpha, *, method="gaussian", confidence=0.95, seed=None) -> Estimate

Lower bounds (``AuditResult.epsilon_lower`` with a threshold or one-run method) hold with
probability >= confidence for every mechanism; GDP numbers are estimates labelled with their
assumption (Dong, Roth, Su 2019; Nasr et al. 2023). Attacks: ``statistic="auto"`` fits the attack families of
:mod:`dpaudit.audit.attacks.families` (value, projection, exact empirical likelihood ratio,
logistic regression, a small neural network with the ``learn`` extra, bit-level float features)
on the selection sample and keeps the best (:mod:`dpaudit.audit.attacks.selection`); outputs of any form
are accepted (:mod:`dpaudit.audit.attacks.outputs`). Trials run in
seed-deterministic chunks on any ``concurrent.futures`` executor (``workers=N``, ``executor=``;
:mod:`dpaudit.core.runner`, docs/scaling.md): the result never depends on where they ran.
"""

from dpaudit._lazy import lazy_exports

_EXPORTS = {
    "audit_mechanism": "dpaudit.audit.mechanism",
    "audit_scores": "dpaudit.audit.protocol.two_sample",
    "NeighbouringRelationWarning": "dpaudit.audit.protocol.relation",
    "audit_optimizer": "dpaudit.audit.optimizer",
    "audit_training": "dpaudit.audit.training",
    "audit_one_run": "dpaudit.audit.training",
    "one_run_ceiling": "dpaudit.audit.stats.one_run",
    "renyi_divergence": "dpaudit.audit.stats.renyi",
    "AuditResult": "dpaudit.audit.protocol.result",
    "Estimate": "dpaudit.audit.protocol.result",
    "cp_upper": "dpaudit.audit.stats.binomial",
    "cp_lower": "dpaudit.audit.stats.binomial",
    "epsilon_lower_from_rates": "dpaudit.audit.stats.error_rates",
    "epsilon_lower_from_counts": "dpaudit.audit.stats.error_rates",
    "mu_lower_from_counts": "dpaudit.audit.stats.gdp",
    "gdp_epsilon_of": "dpaudit.audit.stats.gdp",
    "heldout_test": "dpaudit.audit.stats.rules",
    "bonferroni_test": "dpaudit.audit.stats.rules",
    "one_run_epsilon_lower": "dpaudit.audit.stats.one_run",
    "one_run_p_value": "dpaudit.audit.stats.one_run",
    "one_run_audit": "dpaudit.audit.stats.one_run",
    "run_chunks": "dpaudit.core.runner",
    "run_jobs": "dpaudit.core.runner",
    "ChunkError": "dpaudit.core.runner",
    "ProcessPool": "dpaudit.core.runner",
    "InProcessExecutor": "dpaudit.core.runner",
    "one_run_protocol": "dpaudit.audit.protocol.one_run",
    "one_run_fdp_epsilon_lower": "dpaudit.audit.stats.one_run_fdp",
    "one_run_fdp_mu_lower": "dpaudit.audit.stats.one_run_fdp",
    "one_run_fdp_gdp_epsilon": "dpaudit.audit.stats.one_run_fdp",
    "attack_statistics": "dpaudit.audit.stats.attack_stats",
    "threshold_audit_limit": "dpaudit.audit.stats.threshold_limit",
    "roc_frontier": "dpaudit.audit.stats.thresholds",
    "frontier_test": "dpaudit.audit.stats.rules",
    "all_thresholds_test": "dpaudit.audit.stats.rules",
    "order_statistic_levels": "dpaudit.audit.stats.rules",
    "choose_guesses": "dpaudit.audit.stats.one_run",
    "projection_statistic": "dpaudit.audit.attacks.statistics",
    "laplace_lr_statistic": "dpaudit.audit.attacks.statistics",
    "gaussian_lr_statistic": "dpaudit.audit.attacks.statistics",
    "empirical_lr_statistic": "dpaudit.audit.attacks.families",
    "logistic_statistic": "dpaudit.audit.attacks.families",
    "naive_bayes_statistic": "dpaudit.audit.attacks.families",
    "mlp_statistic": "dpaudit.audit.attacks.families",
    "float_bits_statistic": "dpaudit.audit.attacks.floating",
    "float_reachability_statistic": "dpaudit.audit.attacks.floating",
    "check_floating_point": "dpaudit.audit.floating",
    "FloatingPointResult": "dpaudit.audit.floating",
    "default_features": "dpaudit.audit.attacks.families",
    "ATTACK_FAMILIES": "dpaudit.audit.attacks.registry",
    "statdp_pairs": "dpaudit.audit.attacks.selection",
    "linear_instance_table": "dpaudit.audit.linear_instance",
    # strategy objects: threshold rules, attack choices; execution options
    "HeldOut": "dpaudit.audit.stats.rules",
    "Bonferroni": "dpaudit.audit.stats.rules",
    "Frontier": "dpaudit.audit.stats.rules",
    "Combined": "dpaudit.audit.stats.rules",
    "AllThresholds": "dpaudit.audit.stats.rules",
    "ThresholdRule": "dpaudit.audit.stats.rules",
    "Contest": "dpaudit.audit.attacks.selection",
    "FixedStatistic": "dpaudit.audit.attacks.selection",
    "attack_choice": "dpaudit.audit.attacks.selection",
    "Execution": "dpaudit.core.execution",
    "simulate_noisy_gd": "dpaudit.audit.linear_instance",
}
__all__, __getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())
