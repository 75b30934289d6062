import os

from hypothesis import HealthCheck, settings

settings.register_profile(
    "dpaudit",
    deadline=None,
    max_examples=60,
    suppress_health_check=[HealthCheck.too_slow],
    derandomize=True,
)
settings.register_profile("ci", parent=settings.get_profile("dpaudit"), max_examples=60)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "dpaudit"))
