"""The theorems of the seed papers as privacy bounds (``dpaudit.bounds``)."""

from dpaudit._lazy import lazy_exports

_EXPORTS = {
    # Chourasia, Ye, Shokri 2021
    "langevin_rdp": "dpaudit.bounds.langevin",
    "langevin_lower_rdp": "dpaudit.bounds.langevin",
    "linear_gaussian_rdp": "dpaudit.bounds.langevin",
    "composition_rdp": "dpaudit.bounds.langevin",
    "NoisyGDLastIterate": "dpaudit.bounds.langevin",
    # Hendrikx, Mangold, Bellet 2024
    "rgm_rdp": "dpaudit.bounds.rgm",
    "rgm_epsilon": "dpaudit.bounds.rgm",
    "rgm_local_sensitivity_rdp": "dpaudit.bounds.rgm",
    "rgm_closed_form_epsilon": "dpaudit.bounds.rgm",
    "ptr_distance": "dpaudit.bounds.ptr",
    "propose_test_release": "dpaudit.bounds.ptr",
    "ridge_relative_sensitivity": "dpaudit.bounds.ridge",
    "langevin_epsilon": "dpaudit.bounds.langevin",
    "langevin_lower_epsilon": "dpaudit.bounds.langevin",
    "linear_gaussian_epsilon": "dpaudit.bounds.langevin",
    "composition_epsilon": "dpaudit.bounds.langevin",
    "langevin_utility_settings": "dpaudit.bounds.langevin",
    "LangevinSettings": "dpaudit.bounds.langevin",
    "rgm_tcdp": "dpaudit.bounds.rgm",
    "ptr_lower_bound_statistic": "dpaudit.bounds.ptr",
    "PTRResult": "dpaudit.bounds.ptr",
    "ridge_smoothness_constants": "dpaudit.bounds.ridge",
    "ridge_ptr_constants": "dpaudit.bounds.ridge",
    # Lee, Kifer 2018
    "dp_agd_budget": "dpaudit.bounds.dp_agd",
    "ZCDPFilter": "dpaudit.bounds.dp_agd",
    "BudgetExceededError": "dpaudit.bounds.dp_agd",
    "DPAGDBudgets": "dpaudit.bounds.dp_agd",
    "dp_agd_initial_budgets": "dpaudit.bounds.dp_agd",
    "noisy_max_scale": "dpaudit.bounds.dp_agd",
    "noisy_max_charge": "dpaudit.bounds.dp_agd",
    "gradient_noise_sigma": "dpaudit.bounds.dp_agd",
    "gradavg": "dpaudit.bounds.dp_agd",
    "gradavg_charge": "dpaudit.bounds.dp_agd",
    "gradavg_variance": "dpaudit.bounds.dp_agd",
    # Ghazi, Guzman, Kamath, Kumar, Manurangsi 2024
    "SparseCalibration": "dpaudit.bounds.sparse",
    "sparse_mean_sensitivity": "dpaudit.bounds.sparse",
    "projection_mechanism_calibration": "dpaudit.bounds.sparse",
    "l1_recovery_calibration": "dpaudit.bounds.sparse",
    "output_perturbation_calibration": "dpaudit.bounds.sparse",
    "bias_reduced_level_probabilities": "dpaudit.bounds.sparse",
    "bias_reduced_step_cost": "dpaudit.bounds.sparse",
    "RandomStoppingFilter": "dpaudit.bounds.sparse",
}
__all__, __getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())
