"""The statistics of auditing (the lowest layer of :mod:`dpaudit.audit`): pure functions of counts and scores.

Clopper-Pearson bounds (:mod:`.binomial`), epsilon from error rates (:mod:`.error_rates`), the GDP estimate
(:mod:`.gdp`), threshold tests and the ROC frontier (:mod:`.thresholds`), threshold rules as value objects with one
dispatcher (:mod:`.rules`), the limit of a threshold audit (:mod:`.threshold_limit`), one-run statistics
(:mod:`.one_run`, :mod:`.one_run_fdp`), descriptive attack statistics (:mod:`.attack_stats`), advisory power
numbers (:mod:`.power`), Renyi-divergence estimators (:mod:`.renyi`) and the :class:`~.estimate.Estimate` type.
Nothing here runs a mechanism or draws a trial.
"""
