"""Tightness of the auditors: epsilon_lower / true epsilon with 1e5 samples per side (issue 6).

Cases: Laplace (epsilon = 1, pure), Gaussian (sigma = 1, delta = 1e-5; true epsilon from the exact
GDP/Balle-Wang profile), and DP-GD with a white-box Dirac canary (full batch, 10 steps,
noise multiplier 3, add/remove; the canary coordinate is a composition of Gaussians, so the true
epsilon is the GDP value with mu = sqrt(10)/3). For each: the best valid bound (threshold test,
held-out selection, Clopper-Pearson + delta term), the GDP estimate (labelled: valid only under
the mu-GDP assumption, not for Laplace), and the time taken. Goals: >= 0.9 Laplace (valid bound),
>= 0.85 Gaussian cases with the GDP method. Run: ``python benchmarks/audit_tightness.py [--seed S]``.

``--rules`` (issue 17) instead compares, on the SAME score samples (the value of the output; n draws per input),
the certified threshold rules -- held-out, Bonferroni over a quantile grid, combined, and the two-sided ROC
frontier -- beside jax_privacy's ``epsilon_clopper_pearson`` (two-sided, Bonferroni over the frontier of all
2n scores; jax_privacy itself when it is importable, else the column says n/a) and beside the limit of a
threshold audit at n evaluation draws (:func:`dpaudit.audit.stats.threshold_limit.threshold_audit_limit`), for the
Gaussian (sigma 1, delta 1e-5), Laplace (b 1, delta 0) and randomized-response (eps 1, delta 0) mechanisms at
1e4, 1e5 and 1e6 draws. ``--one-run`` prints the one-run bounds in jax_privacy's settings (deterministic
normal scores, 10,000 canaries per side, shift 1/2/4; and random Gaussian canaries): Steinke-Nasr-Jagielski,
the certified f-DP test with the (epsilon, delta) curve, and the Gaussian-family f-DP number (an estimate
assuming mu-GDP), ours beside jax_privacy's.
"""

from __future__ import annotations

import argparse
import math
import time

import numpy as np

from dpaudit.audit import audit_mechanism, audit_optimizer
from dpaudit.audit.stats.gdp import gdp_epsilon_of

N = 100_000


def laplace(x, rng, size):
    return x + rng.laplace(0.0, 1.0, size)


def gaussian(x, rng, size):
    return x + rng.normal(0.0, 1.0, size)


def main(seed: int = 0) -> int:
    rows = []
    t = time.perf_counter()
    thr = audit_mechanism(laplace, 0.0, 1.0, epsilon=1.0, delta=0.0, trials=N, seed=seed)
    gd = audit_mechanism(laplace, 0.0, 1.0, epsilon=1.0, delta=1e-5, trials=N, seed=seed, method="gdp")
    rows.append(("Laplace b=1 (eps=1, delta=0)", 1.0, thr.epsilon_lower, gd.gdp_estimate, time.perf_counter() - t,
                 "GDP at delta=1e-5; assumption false for Laplace"))
    t = time.perf_counter()
    eps_g = gdp_epsilon_of(1.0, 1e-5)
    thr = audit_mechanism(gaussian, 0.0, 1.0, epsilon=eps_g, delta=1e-5, trials=N, seed=seed)
    gd = audit_mechanism(gaussian, 0.0, 1.0, epsilon=eps_g, delta=1e-5, trials=N, seed=seed, method="gdp")
    rows.append(("Gaussian sigma=1 (delta=1e-5)", eps_g, thr.epsilon_lower, gd.gdp_estimate, time.perf_counter() - t, ""))
    t = time.perf_counter()
    steps, nm = 10, 3.0
    eps_d = gdp_epsilon_of(math.sqrt(steps) / nm, 1e-5)
    kw = dict(trials=N, seed=seed, delta=1e-5, steps=steps, noise_multiplier=nm, clip=1.0)
    thr = audit_optimizer("dp-gd", **kw)
    gd = audit_optimizer("dp-gd", method="gdp", **kw)
    rows.append((f"DP-GD white-box canary (T={steps}, z={nm:g})", eps_d, thr.epsilon_lower, gd.gdp_estimate,
                 time.perf_counter() - t, f"claim {thr.epsilon_claimed:.4f} (RDP accountant)"))
    print(f"audit tightness, {N} samples per side, 95% confidence, seed {seed}")
    print(f"{'case':<40} {'true eps':>9} {'valid LB':>9} {'ratio':>6} {'GDP est.*':>9} {'ratio':>6} {'time':>7}  note")
    for name, true, lb, g, dt, note in rows:
        print(f"{name:<40} {true:>9.4f} {lb:>9.4f} {lb / true:>6.3f} {g:>9.4f} {g / true:>6.3f} {dt:>6.1f}s  {note}")
    print("* GDP est.: an estimate, assuming mu-GDP (not a certified bound; never sets a verdict)")
    return 0


# ---------------------------------------------------------------------------- issue 17: threshold rules
RULE_NAMES = ("heldout", "bonferroni", "combined", "frontier", "all-thresholds")
SEL_FRACTION = 0.3  # audit_mechanism's default selection share


def _samples(kind, n, rng):
    if kind == "discrete-laplace":  # eps = 1: two-sided geometric noise on 0 and 1
        p = math.exp(-1.0)
        return (rng.geometric(1 - p, n) - rng.geometric(1 - p, n)).astype(float), \
            (1 + rng.geometric(1 - p, n) - rng.geometric(1 - p, n)).astype(float)
    if kind == "gaussian":
        return rng.normal(0.0, 1.0, n), rng.normal(1.0, 1.0, n)
    if kind == "laplace":
        return rng.laplace(0.0, 1.0, n), rng.laplace(1.0, 1.0, n)
    q = math.exp(1.0) / (1.0 + math.exp(1.0))  # randomized response, eps = 1: output = bit w.p. q
    return (rng.random(n) >= q).astype(float), (rng.random(n) < q).astype(float)


def _jax_clopper_pearson(s0, s1, delta):
    try:
        from jax_privacy import auditing
    except ImportError:
        return math.nan
    a = auditing.CanaryScoreAuditor(s1, s0)
    return float(a.epsilon_clopper_pearson(0.05, delta, one_sided=False))


CASES = {"gaussian": (1e-5, dict(mu=1.0)), "laplace": (0.0, dict(epsilon=1.0)),
         "randomized-response": (0.0, dict(epsilon=1.0))}


def rules_table(sizes=(10_000, 100_000, 1_000_000), seeds=(0, 1, 2), mechanisms=tuple(CASES), rules=RULE_NAMES):
    """Certified epsilon of each threshold rule on the same samples, and jax_privacy's (module docstring): per
    (mechanism, n) the per-seed values of every rule (``rules``) and of jax_privacy."""
    from dpaudit.audit.stats.rules import threshold_rule, threshold_test
    from dpaudit.audit.stats.threshold_limit import threshold_audit_limit

    rows = []
    for kind in mechanisms:
        delta, par = CASES[kind]
        for n in sizes:
            vals = {r: [] for r in tuple(rules) + ("jax",)}
            t0 = time.perf_counter()
            for seed in seeds:
                rng = np.random.default_rng([17, seed, n])
                s0, s1 = _samples(kind, n, rng)
                k = int(round(SEL_FRACTION * n))
                for rule in rules:
                    res = threshold_test(threshold_rule(rule), s0[:k], s1[:k], s0[k:], s1[k:], delta=delta, beta=0.05)
                    vals[rule].append(max(0.0, res["value"]))
                vals["jax"].append(_jax_clopper_pearson(s0, s1, delta))
            lim = threshold_audit_limit(kind, n - int(round(SEL_FRACTION * n)), delta=delta, **par)["epsilon"]
            lim_all = threshold_audit_limit(kind, n, delta=delta, **par)["epsilon"]
            rows.append((kind, n, {r: np.asarray(v, dtype=float) for r, v in vals.items()}, lim, lim_all,
                         time.perf_counter() - t0))
    return rows


def print_rules(rows, seeds):
    print(f"threshold rules, mean certified epsilon over {len(seeds)} seeds, 95% confidence; ours: {SEL_FRACTION:.0%} "
          f"selection / {1 - SEL_FRACTION:.0%} evaluation (all-thresholds: every score, nothing is selected); jax_privacy "
          "epsilon_clopper_pearson(0.05, delta, one_sided=False): all 2n scores; (x) = fraction of limit(n)")
    names = [r for r in rows[0][2] if r != "jax"] if rows else []
    print(f"{'mechanism':<20} {'n':>8} " + " ".join(f"{r:>16}" for r in names)
          + f" {'jax 2-sided':>16} {f'limit({1 - SEL_FRACTION:.2g}n)':>11} {'limit(n)':>9} {'best-jax':>9} {'wins':>5} {'time':>6}")
    for kind, n, v, lim, lim_all, dt in rows:
        best = max(names, key=lambda r: float(np.mean(v[r])))
        diff = v[best] - v["jax"]
        print(f"{kind:<20} {n:>8} " + " ".join(f"{np.mean(v[r]):>8.4f} ({np.mean(v[r]) / lim_all:.3f})" for r in names)
              + f" {np.mean(v['jax']):>8.4f} ({np.mean(v['jax']) / lim_all:.3f}) {lim:>11.4f} {lim_all:>9.4f}"
              + f" {np.mean(diff):>+9.4f} {int(np.sum(diff >= 0)):>2}/{diff.size:<2} {dt:>5.1f}s  best: {best}")


# ---------------------------------------------------------------------------- issue 29: the "auto" rule table
CHOICE_CASES = (("gaussian", "continuous"), ("laplace", "continuous"), ("discrete-laplace", "~30 values"),
                ("randomized-response", "2 values"))


def _choice_rules(s0, s1, k, fitted, delta):
    """The candidate rules of one situation, on the same draws: held-out, Bonferroni (over the distinct selection
    values when there are few -- the category boundaries "auto" uses -- else over 50 quantiles), all-thresholds
    (on the evaluation scores when the statistic is fitted, on every score when it is fixed)."""
    from dpaudit.audit.stats.rules import AllThresholds, Bonferroni, HeldOut, threshold_test

    values = np.unique(np.concatenate([s0[:k], s1[:k]]))
    bonf = Bonferroni(grid=tuple(values.tolist())) if values.size <= 64 else Bonferroni()
    rules = {"heldout": HeldOut(), "bonferroni": bonf, "all-thresholds": AllThresholds(pool_selection=not fitted)}
    return {name: max(0.0, threshold_test(r, s0[:k], s1[:k], s0[k:], s1[k:], delta=delta, beta=0.05)["value"])
            for name, r in rules.items()}


def choice_table(sizes=(1_000, 10_000, 100_000), seeds=tuple(range(20))):
    """Mean certified epsilon of held-out, Bonferroni and all-thresholds per situation (mechanism / number of
    distinct scores, trials per input, fitted or fixed statistic), 30% selection: the table "auto" follows."""
    rows = []
    for kind, values in CHOICE_CASES:
        delta = 1e-5 if kind == "gaussian" else 0.0
        for n in sizes:
            for fitted in (True, False):
                acc = {}
                for seed in seeds:
                    rng = np.random.default_rng([29, seed, n])
                    s0, s1 = _samples(kind, n, rng)
                    for r, v in _choice_rules(s0, s1, int(round(SEL_FRACTION * n)), fitted, delta).items():
                        acc.setdefault(r, []).append(v)
                rows.append((kind, values, n, "fitted" if fitted else "fixed", {r: float(np.mean(v)) for r, v in
                                                                                 acc.items()}))
    return rows


def print_choice(rows, seeds):
    print(f"the rule table of selection='auto': mean certified epsilon over {len(seeds)} seeds, 95% confidence, "
          f"{SEL_FRACTION:.0%} selection; all-thresholds certifies on the evaluation scores (fitted) or on all (fixed)")
    print(f"{'mechanism':<20} {'scores':<11} {'n':>7} {'statistic':<9} {'heldout':>9} {'bonferroni':>10} "
          f"{'all-thr.':>9}  best")
    for kind, values, n, st, v in rows:
        best = max(v, key=v.get)
        print(f"{kind:<20} {values:<11} {n:>7} {st:<9} {v['heldout']:>9.4f} {v['bonferroni']:>10.4f} "
              f"{v['all-thresholds']:>9.4f}  {best}")


# ---------------------------------------------------------------------------- issue 29: false alarms
def false_alarm_table(n=4000, seeds=200):
    """Each tight mechanism audited at its exact (epsilon, delta) with the value of the output as the statistic:
    how often the certified epsilon_lower exceeds epsilon (held-out as "auto" picks it, and all-thresholds), over
    ``seeds`` seeds of ``n`` draws per input (30% selection), with the 95% Clopper-Pearson interval of the rate."""
    from dpaudit.audit.stats.binomial import cp_lower, cp_upper
    from dpaudit.audit.stats.gdp import gdp_epsilon_of
    from dpaudit.audit.stats.rules import AllThresholds, HeldOut, threshold_test

    cases = (("laplace", 1.0, 0.0), ("randomized-response", 1.0, 0.0), ("discrete-laplace", 1.0, 0.0),
             ("gaussian", gdp_epsilon_of(1.0, 1e-5), 1e-5))
    rows = []
    k = int(round(SEL_FRACTION * n))
    for kind, eps, delta in cases:
        for rule in (HeldOut(), AllThresholds()):
            alarms = 0
            for seed in range(seeds):
                s0, s1 = _samples(kind, n, np.random.default_rng([2929, seed]))
                alarms += threshold_test(rule, s0[:k], s1[:k], s0[k:], s1[k:], delta=delta, beta=0.05)["value"] > eps
            rows.append((kind, eps, delta, rule.name, alarms, seeds, cp_lower(alarms, seeds, 0.025),
                         cp_upper(alarms, seeds, 0.025)))
    return rows


def print_false_alarms(rows):
    print("false alarms: tight mechanisms audited at their exact (epsilon, delta), 95% confidence (nominal rate 5%)")
    print(f"{'mechanism':<20} {'epsilon':>8} {'delta':>7} {'rule':<15} {'alarms':>7} {'rate':>6} {'95% CP interval':>17}")
    for kind, eps, delta, rule, a, m, lo, hi in rows:
        print(f"{kind:<20} {eps:>8.4f} {delta:>7.0e} {rule:<15} {a:>3}/{m:<3} {a / m:>6.3f}   [{lo:.4f}, {hi:.4f}]")


# ---------------------------------------------------------------------------- issue 17: one-run bounds
def _det_normal(shift, n):
    from scipy.stats import norm

    return norm.ppf(np.linspace(0.0, 1.0, n, endpoint=False) + 1.0 / (2 * n)) + shift


def _frontier_counts(s_in, s_out):
    """(tp, fp) at the ROC-frontier thresholds "in iff score >= t" of jax_privacy's one-run audit (all
    thresholds, Bonferroni over their number) -- the same protocol, re-computed here so that our bounds are
    evaluated at exactly its (r, v)."""
    from dpaudit.audit.stats.thresholds import _upper_hull

    t = np.concatenate([np.union1d(s_in, s_out), [np.inf]])
    tp = s_in.size - np.searchsorted(np.sort(s_in), t, side="left")
    fp = s_out.size - np.searchsorted(np.sort(s_out), t, side="left")
    order = np.lexsort((tp, fp))
    hull = order[_upper_hull(fp[order].astype(float), tp[order].astype(float))]
    return tp[hull], fp[hull]


def one_run_table(delta=1e-6, significance=0.05):
    from dpaudit.audit.stats.one_run import one_run_epsilon_lower
    from dpaudit.audit.stats.one_run_fdp import one_run_fdp_epsilon_lower, one_run_fdp_gdp_epsilon

    rows = []
    settings = [(f"deterministic normal, shift {s}", _det_normal(s, 10_000), _det_normal(0.0, 10_000))
                for s in (1, 2, 4)]
    rng = np.random.default_rng(17)
    settings.append(("random Gaussian canaries, shift 1", rng.normal(1.0, 1.0, 10_000), rng.normal(0.0, 1.0, 10_000)))
    for name, s_in, s_out in settings:
        t0 = time.perf_counter()
        tp, fp = _frontier_counts(s_in, s_out)
        g = tp.size
        m, conf = s_in.size + s_out.size, 1.0 - significance / g
        best = {"snj": 0.0, "fdp": 0.0, "gdp": 0.0}
        for v, f in zip(tp, fp):
            r, v = int(v + f), int(v)
            if r == 0 or 2 * v <= r:
                continue
            best["snj"] = max(best["snj"], one_run_epsilon_lower(m=m, r=r, v=v, delta=delta, confidence=conf))
            best["fdp"] = max(best["fdp"], one_run_fdp_epsilon_lower(m=m, r=r, v=v, delta=delta, confidence=conf))
            best["gdp"] = max(best["gdp"], one_run_fdp_gdp_epsilon(m=m, r=r, v=v, delta=delta,
                                                                   confidence=conf)["epsilon"])
        jx = {"snj": math.nan, "gdp": math.nan}
        try:
            from jax_privacy import auditing

            a = auditing.CanaryScoreAuditor(s_in, s_out)
            jx = {"snj": float(a.epsilon_one_run(significance, delta)),
                  "gdp": float(a.epsilon_one_run_fdp(significance, delta))}
        except ImportError:
            pass
        rows.append((name, g, best, jx, time.perf_counter() - t0))
    return rows


def print_one_run(rows):
    print("one-run bounds, 20,000 canaries, delta 1e-6, significance 0.05 Bonferroni over the G frontier thresholds")
    print(f"{'setting':<36} {'G':>4} {'SNJ ours':>9} {'SNJ jax':>8} {'f-DP (eps,delta) ours*':>23} "
          f"{'f-DP GDP ours**':>16} {'f-DP GDP jax**':>15} {'time':>6}")
    for name, g, b, jx, dt in rows:
        print(f"{name:<36} {g:>4} {b['snj']:>9.4f} {jx['snj']:>8.4f} {b['fdp']:>23.4f} {b['gdp']:>16.4f} "
              f"{jx['gdp']:>15.4f} {dt:>5.1f}s")
    print("*  certified for every mechanism; ** estimate assuming mu-GDP (certified only: 'not mu-GDP below mu_lower')")


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--rules", action="store_true", help="compare the threshold rules (issue 17)")
    ap.add_argument("--one-run", action="store_true", help="one-run bounds in jax_privacy's settings (issue 17)")
    ap.add_argument("--choice", action="store_true", help="the measured table of selection='auto' (issue 29)")
    ap.add_argument("--false-alarms", action="store_true", help="false alarms over 200 seeds (issue 29)")
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--sizes", type=str, default="10000,100000,1000000")
    ap.add_argument("--mechanisms", type=str, default=",".join(CASES), help="comma-separated, of " + ", ".join(CASES))
    ap.add_argument("--rule-list", type=str, default=",".join(RULE_NAMES), help="the rules compared by --rules")
    ap.add_argument("--selection-fraction", type=float, default=SEL_FRACTION,
                    help="share of the draws that choose the threshold (--rules, --choice)")
    a = ap.parse_args()
    SEL_FRACTION = a.selection_fraction
    if a.false_alarms:
        print_false_alarms(false_alarm_table())
        raise SystemExit(0)
    if a.choice:
        sd = tuple(range(a.seeds))
        print_choice(choice_table(tuple(int(x) for x in a.sizes.split(",")), sd), sd)
        raise SystemExit(0)
    if a.rules or a.one_run:
        if a.rules:
            sd = tuple(range(a.seeds))
            print_rules(rules_table(tuple(int(x) for x in a.sizes.split(",")), sd, tuple(a.mechanisms.split(",")),
                                    tuple(a.rule_list.split(","))), sd)
        if a.one_run:
            print_one_run(one_run_table())
        raise SystemExit(0)
    raise SystemExit(main(a.seed))
