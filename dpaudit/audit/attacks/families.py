"""Attack families: score functions LEARNED from selection outputs, for any kind of output.

Every family is a small strategy object (as in jax_privacy's auditing): a ``name``, a
``description``, ``applicable(train0, train1) -> (bool, reason)`` and ``fit(train0, train1, seed)
-> statistic``. The fitted statistic is a picklable callable ``statistic(batch) -> scores`` on a
batch in the representation of :mod:`dpaudit.audit.attacks.outputs` (numeric ``(size, k)`` float array or
object keys), with a ``description`` and, for statistics that take few distinct values, a
``tie_values`` table (the auditor then breaks ties at the threshold with its own coins, as
DP-Sniper does; :mod:`dpaudit.audit.attacks.selection`). By post-processing, any statistic fitted on
draws independent of the evaluation draws gives a valid test; the families differ only in power.

Families of real-valued attacks (``auto`` tries the applicable ones, :func:`dpaudit.audit.attacks.selection.choose_attack`):

``value``
    the scalar output itself (numeric, one value per run).
``projection``
    projection of a numeric vector on the training-sample mean difference (NaN as 0).
``empirical-lr``
    exact empirical likelihood ratio: each output is a category (its canonical key; for real
    vectors with many distinct values, per-coordinate quantile bins, and a hash of the bin tuple
    into at most ``max_categories`` buckets when even that is too many -- recorded in the
    description), both output distributions are estimated on the training sample with additive
    (Jeffreys, 1/2) smoothing, and the score is the estimated log-likelihood ratio
    log p1(o)/p0(o). The Neyman-Pearson test for discrete outputs (SVT answer lists, noisy-max
    indices, RAPPOR bit vectors) when the support is small.
``naive-bayes``
    per-coordinate empirical log-likelihood ratios on quantile bins, summed over the coordinates of
    a numeric output and (for vectors) their first differences: the learned Neyman-Pearson
    statistic when coordinates are independent (noisy histograms), or their increments are
    (prefix sums).
``logistic``
    L2-regularised logistic regression on features (:func:`default_features`, or the user's
    ``features``), fitted with L-BFGS (scipy) on the full training batch; the score is the logit
    of the posterior P[x' | o] (the classifier of DP-Sniper, Bichsel et al., S&P 2021).
``mlp``
    a small neural network (hidden layers 10 and 5, as in DP-Sniper's evaluation) from
    scikit-learn (optional extra ``dpaudit[learn]``). Not in ``statistic="auto"``: a default result must not depend
    on which extras are installed; name it to use it (``statistic=["auto-real", "mlp"]``).

The bit-level family ``float-bits`` (Mironov 2012) is in :mod:`dpaudit.audit.attacks.floating`; the
registry of the families ``statistic="auto"`` tries is :mod:`dpaudit.audit.attacks.registry`.
"""

from __future__ import annotations

import math
import zlib

import numpy as np
from scipy.optimize import minimize

from dpaudit.audit.attacks.base import (
    BIG,
    MAX_TABLE_COLUMNS,
    AttackFamily,
    CategoryTable,
    FittedStatistic,
    finite_values,
    numeric_or_raise,
)
from dpaudit.audit.attacks.outputs import as_output_batch, is_numeric_batch, object_features, row_keys
from dpaudit.audit.stats.binomial import cp_upper
from dpaudit.audit.stats.counting import SortedSearch, inverted_cdf_index
from dpaudit.audit.stats.error_rates import epsilon_lower_from_rates
from dpaudit.audit.stats.thresholds import candidate_thresholds, oriented_counts
from dpaudit.core.validation import check_count

__all__ = ["ValueAttack", "ProjectionAttack", "EmpiricalLRAttack", "LogisticAttack", "MLPAttack",
           "NaiveBayesAttack", "default_features", "empirical_lr_statistic", "naive_bayes_statistic",
           "logistic_statistic", "mlp_statistic", "sklearn_available", "DEFAULT_MAX_CATEGORIES", "MAX_FIT_ROWS"]

#: largest number of categories of the empirical likelihood ratio (beyond: bins, then hashing)
DEFAULT_MAX_CATEGORIES = 4096
#: rows used to fit the classifiers (a random subset of the training batch beyond this)
MAX_FIT_ROWS = 200_000


def sklearn_available() -> bool:
    try:
        import sklearn  # noqa: F401
    except ImportError:
        return False
    return True


class _Value(FittedStatistic):
    family = "value"
    description = "output value (scalar)"

    def __call__(self, batch):
        b = numeric_or_raise(batch, "the value attack")
        x = b[:, 0]
        if np.isfinite(x).all():  # nothing to replace: the copy nan_to_num would return
            return x.copy()
        return np.nan_to_num(x, nan=0.0, posinf=BIG, neginf=-BIG)


class _Projection(FittedStatistic):
    family = "projection"

    def __init__(self, unit):
        self.u = unit
        self.description = "projection on the training-sample mean difference"

    def __call__(self, batch):
        b = numeric_or_raise(batch, "the projection attack")
        if b.shape[1] != self.u.size:
            raise ValueError(f"outputs have dimension {b.shape[1]}, the fitted direction has {self.u.size}")
        return finite_values(b) @ self.u



class _Encoder:
    """Maps a batch to integer category codes: exact keys, quantile bins per coordinate, or hashes."""

    def __init__(self, mode, *, key_ids=None, edges=None, specials=None, radix=None, buckets=None, cell_codes=None):
        self.mode, self.key_ids, self.edges, self.specials = mode, key_ids, edges, specials
        self.radix, self.buckets = radix, buckets
        # binned-exact: the observed cells as sorted integer codes ``bins @ radix`` (their index is the cell's id,
        # as in ``key_ids``), looked up by a search instead of a dictionary per row
        self.cell_codes = cell_codes

    def _exact_table(self, dtype):
        """The fitted byte keys of numeric rows of ``dtype`` sorted, with their ids (None when there are none or they
        are of another width: then every lookup goes through the dictionary)."""
        cached: dict | None = getattr(self, "exact_tables", None)
        if cached is None:
            cached = {}
            self.exact_tables = cached
        if dtype not in cached:
            keys = [k for k in self.key_ids if isinstance(k, bytes) and len(k) == dtype.itemsize]
            if not keys or len(keys) != len(self.key_ids):
                cached[dtype] = None
            else:
                arr = np.frombuffer(b"".join(keys), dtype=dtype)
                order = np.argsort(arr, kind="stable")
                ids = np.fromiter((self.key_ids[k] for k in keys), dtype=np.int64, count=len(keys))
                cached[dtype] = (arr[order], ids[order])
        return cached[dtype]

    def bins(self, batch):
        b = batch
        cols = []
        if getattr(self, "searches", None) is None:  # the edges' search tables, built once per encoder
            self.searches = [SortedSearch(e) for e in self.edges]
        for j in range(b.shape[1]):
            x = b[:, j]
            e = self.edges[j]
            code = self.searches[j](x, side="right").astype(np.int64)
            for s_i, s in enumerate(self.specials[j]):
                hit = np.isnan(x) if (isinstance(s, float) and math.isnan(s)) else (x == s)
                code = np.where(hit, e.size + 1 + s_i, code)
            cols.append(code)
        return np.stack(cols, axis=1)

    def __call__(self, batch):
        if self.mode == "exact":
            keys = row_keys(batch)
            if isinstance(keys, np.ndarray) and keys.dtype.kind == "V":
                table = self._exact_table(keys.dtype)
                if table is not None:  # numeric rows: their byte keys searched among the fitted ones
                    sorted_keys, ids = table
                    i = np.minimum(np.searchsorted(sorted_keys, keys), sorted_keys.size - 1)
                    return np.where(sorted_keys[i] == keys, ids[i], -1).astype(np.int64)
            get = self.key_ids.get
            return np.fromiter((get(k, -1) for k in keys.tolist()), dtype=np.int64, count=len(keys))
        if self.mode in ("binned", "binned+hashed", "binned-exact"):
            bins = self.bins(numeric_or_raise(batch, "binning"))
            if self.mode == "binned":
                return bins @ self.radix
            if self.mode == "binned-exact" and getattr(self, "cell_codes", None) is not None:
                return _lookup(self.cell_codes, bins @ self.radix)
            if self.mode == "binned-exact":
                rows = np.ascontiguousarray(bins)
                get = self.key_ids.get
                return np.fromiter((get(r.tobytes(), -1) for r in rows), dtype=np.int64, count=rows.shape[0])
            return _hash_rows(bins, self.buckets)
        # hashed object keys
        keys = row_keys(batch)
        return np.fromiter((zlib.crc32(repr(k).encode()) % self.buckets for k in keys.tolist()), dtype=np.int64,
                           count=len(keys))


def _lookup(sorted_codes, codes):
    """The index of each code among ``sorted_codes`` (distinct), -1 where it is not one of them."""
    if sorted_codes.size and int(sorted_codes[-1]) - int(sorted_codes[0]) <= 8 * sorted_codes.size + 4096:
        lo = int(sorted_codes[0])  # few codes over a short range: a direct table
        table = np.full(int(sorted_codes[-1]) - lo + 1, -1, dtype=np.int64)
        table[sorted_codes - lo] = np.arange(sorted_codes.size)
        inside = (codes >= lo) & (codes <= sorted_codes[-1])
        return np.where(inside, table[np.where(inside, codes - lo, 0)], -1)
    i = np.minimum(np.searchsorted(sorted_codes, codes), max(sorted_codes.size - 1, 0))
    if sorted_codes.size == 0:
        return np.full(codes.shape, -1, dtype=np.int64)
    return np.where(sorted_codes[i] == codes, i, -1).astype(np.int64)


def _cell_radix(edges, specials):
    """Mixed-radix weights making ``bins @ radix`` an integer code of a row of bins, ordered as the rows
    (lexicographically: the first coordinate most significant), or None when the codes would not fit in int64."""
    bases = [int(e.size) + 1 + len(sp) for e, sp in zip(edges, specials)]
    if math.prod(bases) >= 2 ** 62:
        return None
    weights = [math.prod(bases[j + 1:]) for j in range(len(bases))]
    return np.asarray(weights, dtype=np.int64)


def _hash_rows(ints, buckets):
    h = np.zeros(ints.shape[0], dtype=np.uint64)
    with np.errstate(over="ignore"):
        for j in range(ints.shape[1]):
            h = (h * np.uint64(1_000_003)) ^ ints[:, j].astype(np.uint64)
            h ^= h >> np.uint64(29)
    return (h % np.uint64(buckets)).astype(np.int64)


def _special_values(x, min_share: float = 0.01, most: int = 8):
    """Values of a column frequent enough to be special (plus NaN and +-inf when present)."""
    out = []
    if np.isnan(x).any():
        out.append(float("nan"))
    for s in (math.inf, -math.inf):
        if np.any(x == s):
            out.append(s)
    f = x[np.isfinite(x)]
    if f.size:
        vals, counts = np.unique(f, return_counts=True)
        order = np.argsort(-counts, kind="stable")
        for i in order[:most]:
            if counts[i] >= max(2, min_share * x.size):
                out.append(float(vals[i]))
    return out


def _quantile_edges(x, bins, *, is_sorted: bool = False):
    if x.size == 0:
        return np.empty(0)
    half = max(bins // 2, 1)
    tail = np.geomspace(0.5 / max(x.size, 2) * 20, 0.5, half + 1)[:-1]
    levels = np.unique(np.clip(np.concatenate([tail, 1 - tail, np.linspace(0, 1, bins + 1)[1:-1]]), 0, 1))
    if is_sorted:  # numpy.quantile(x, levels, method="inverted_cdf"), read off the sorted values
        return np.unique(x[inverted_cdf_index(x.size, levels)])
    return np.unique(np.quantile(x, levels, method="inverted_cdf"))


#: quantile bins per coordinate tried by the empirical likelihood ratio on many-valued numeric outputs
ELR_BINS = (64, 32, 16, 8, 4, 2)


def _ordinary(col, specials):
    mask = np.isfinite(col)
    for sp in specials:
        if not math.isnan(sp):
            mask &= col != sp
    return col[mask]


def _binned_columns(a, b):
    """What every bin count's encoder of these training outputs shares: the pooled batch, each column's special
    values and its ordinary values sorted."""
    both = np.concatenate([a, b])
    specials = [_special_values(both[:, j]) for j in range(both.shape[1])]
    return both, specials, [np.sort(_ordinary(both[:, j], specials[j])) for j in range(both.shape[1])]


def _binned_encoder(a, b, per, max_categories, columns=None):
    """Encoder of the OBSERVED joint cells of ``per`` quantile bins per coordinate (special values
    kept), with its description, or (None, "", per) when more cells than ``max_categories`` occur.
    ``columns``: :func:`_binned_columns` of ``a``, ``b`` (computed once for every bin count)."""
    both, specials, ordinary = _binned_columns(a, b) if columns is None else columns
    k = both.shape[1]
    edges = [_quantile_edges(ordinary[j], per, is_sorted=True) for j in range(k)]
    cells = _Encoder("binned", edges=edges, specials=specials).bins(both)
    radix = _cell_radix(edges, specials)
    if radix is not None:  # distinct cells as sorted integer codes, in the order of numpy.unique(cells, axis=0)
        flat = cells @ radix
        span = int(radix[0]) * (int(edges[0].size) + 1 + len(specials[0]))  # every code lies in [0, span)
        # distinct codes, sorted: by presence over a short range (no sort), else numpy.unique
        codes = np.flatnonzero(np.bincount(flat, minlength=span)) if span <= 8 * flat.size + 4096 else np.unique(flat)
        if codes.size > max_categories:
            return None, "", per
        base = np.concatenate([[np.iinfo(np.int64).max], radix[:-1] // radix[1:]])  # of coordinates 1..k-1
        uniq = (codes[:, None] // radix[None, :]) % base[None, :]
    else:
        uniq = np.unique(cells, axis=0)
        if uniq.shape[0] > max_categories:
            return None, "", per
    ids = {row.tobytes(): i for i, row in enumerate(np.ascontiguousarray(uniq, dtype=np.int64))}
    enc = _Encoder("binned-exact", edges=edges, specials=specials, key_ids=ids, radix=radix,
                   cell_codes=None if radix is None else codes)
    return enc, (f"empirical likelihood ratio over {len(ids)} observed cells of quantile bins ({per} per "
                 f"coordinate, special values kept; {k} coordinate(s))"), per


class _EmpiricalLR(FittedStatistic):
    family = "empirical-lr"

    def __init__(self, encoder, table, description):
        self.encoder, self.table, self.description = encoder, table, description
        self.tie_values = table.values()

    def __call__(self, batch):
        return self.table(self.encoder(batch))


def empirical_lr_statistic(train0, train1, *, max_categories: int = DEFAULT_MAX_CATEGORIES, bins: int | None = None,
                           alpha: float = 0.5):
    """Empirical log-likelihood-ratio statistic fitted on training outputs of x (train0) and x' (train1).

    ``train0``/``train1`` are batches (:func:`dpaudit.audit.attacks.outputs.as_output_batch`) or anything a
    sampler returns. Categories: the outputs' keys when there are at most ``max_categories``
    distinct ones; else (numeric outputs) the observed cells of per-coordinate quantile bins
    (``bins`` per coordinate; by default the count among ``ELR_BINS`` whose observed cells fit in
    ``max_categories`` that does best under two-fold cross-fitting on the training sample, as in
    :func:`naive_bayes_statistic`: fine bins resolve a sharp likelihood ratio, coarse ones estimate
    a smooth one with less noise), hashed into ``max_categories`` buckets if no count fits; object
    outputs are hashed. The description says which.
    """

    max_categories = check_count("max_categories", max_categories, minimum=2)
    a = train0 if isinstance(train0, np.ndarray) and (is_numeric_batch(train0) or train0.dtype == object) \
        else as_output_batch(train0)
    b = train1 if isinstance(train1, np.ndarray) and (is_numeric_batch(train1) or train1.dtype == object) \
        else as_output_batch(train1)
    ka, kb = row_keys(a), row_keys(b)
    pooled = np.concatenate([ka, kb]) if is_numeric_batch(a) else list(ka) + list(kb)
    distinct: dict = {}
    for k in (pooled.tolist() if isinstance(pooled, np.ndarray) else pooled):
        if k not in distinct:
            distinct[k] = len(distinct)
            if len(distinct) > max_categories:
                break
    if len(distinct) <= max_categories:
        enc = _Encoder("exact", key_ids=distinct)
        desc = f"empirical likelihood ratio over {len(distinct)} exact output categories"
    elif is_numeric_batch(a):
        levels = [bins] if bins is not None else list(ELR_BINS)
        prepared = _binned_columns(a, b)
        fits = [e for e in (_binned_encoder(a, b, per, max_categories, prepared) for per in levels) if e[0] is not None]
        if len(fits) > 1:  # cross-fitted choice of the bin count on the training sample (as naive Bayes)
            n = min(a.shape[0], b.shape[0])
            h0, h1 = a.shape[0] // 2, b.shape[0] // 2
            folds = ((a[:h0], b[:h1], a[h0:], b[h1:]), (a[h0:], b[h1:], a[:h0], b[:h1]))
            score = []
            fold_columns = [_binned_columns(fa, fb) for fa, fb, _, _ in folds] if n >= 8 else [None, None]
            for _, _, per in fits:
                v = 0.0
                for (fa, fb, ga, gb), cols in zip(folds, fold_columns):
                    e = _binned_encoder(fa, fb, per, max_categories, cols)[0] if n >= 8 else None
                    if e is None:
                        v = -math.inf
                        break
                    t = CategoryTable(e(fa), e(fb), alpha)
                    v += _split_bound(t(e(ga)), t(e(gb)))
                score.append(v)
            fits = [fits[int(np.argmax(score))]]
        if fits:
            enc, desc, _ = fits[0]
        else:
            both = np.concatenate([a, b])
            k = both.shape[1]
            per = min(levels)
            specials = [_special_values(both[:, j]) for j in range(k)]
            edges = [_quantile_edges(_ordinary(both[:, j], specials[j]), per) for j in range(k)]
            enc = _Encoder("binned+hashed", edges=edges, specials=specials, buckets=max_categories)
            desc = (f"empirical likelihood ratio over quantile bins ({per} per coordinate, {k} coordinates) "
                    f"hashed into {max_categories} buckets")
    else:
        enc = _Encoder("hashed", buckets=max_categories)
        desc = f"empirical likelihood ratio over output keys hashed into {max_categories} buckets"
    table = CategoryTable(enc(a), enc(b), alpha)
    return _EmpiricalLR(enc, table, desc)


class _NaiveBayes(FittedStatistic):
    family = "naive-bayes"

    def __init__(self, columns, edges, specials, tables, description):
        self.mode, self.edges, self.specials, self.tables = columns, edges, specials, tables
        self.description = description

    def columns(self, batch):
        return _nb_columns(numeric_or_raise(batch, "the naive-Bayes attack"), self.mode)

    def __call__(self, batch):
        b = self.columns(batch)
        if b.shape[1] != len(self.tables):
            raise ValueError(f"outputs give {b.shape[1]} columns, the attack was fitted on {len(self.tables)}")
        enc = _Encoder("binned", edges=self.edges, specials=self.specials, radix=np.zeros(len(self.tables), np.int64))
        codes = enc.bins(b)
        out = np.zeros(b.shape[0])
        for j, t in enumerate(self.tables):
            out += t(codes[:, j])
        return out


#: column sets of the naive-Bayes attack: the values; the increments (first value and successive
#: differences: the inverse of a cumulative sum); both (the old default, which counts a cumulative
#: release's evidence twice)
NB_COLUMNS = ("values", "increments", "values+differences")
#: quantile bins per column tried by ``bins=None``
NB_BINS = (4, 8, 16, 32, 64)
#: at least this many training rows per bin and side for a bin count to be tried
_NB_MIN_PER_BIN = 50


def _nb_columns(b, mode):
    if mode == "values" or b.shape[1] == 1:
        return b
    with np.errstate(invalid="ignore"):
        d = np.diff(b, axis=1)
    if mode == "increments":
        return np.concatenate([b[:, :1], d], axis=1)
    return np.concatenate([b, d], axis=1)


def _fit_naive_bayes(a, b, mode, per, alpha, prepared: dict | None = None):
    """The naive-Bayes statistic of ``mode`` columns on ``per`` quantile bins; ``prepared`` caches, per
    ``(id(a), id(b), mode)``, the columns, their special values and sorted ordinary values (one pass for every
    bin count)."""
    key = (id(a), id(b), mode)
    if prepared is not None and key in prepared:
        ca, cb, (both, specials, ordinary) = prepared[key]
    else:
        ca, cb = _nb_columns(a, mode), _nb_columns(b, mode)
        both, specials, ordinary = _binned_columns(ca, cb)
        if prepared is not None:
            prepared[key] = (ca, cb, (both, specials, ordinary))
    edges = [_quantile_edges(ordinary[j], per, is_sorted=True) for j in range(both.shape[1])]
    enc = _Encoder("binned", edges=edges, specials=specials, radix=np.zeros(len(edges), np.int64))
    c0, c1 = enc.bins(ca), enc.bins(cb)
    tables = [CategoryTable(c0[:, j], c1[:, j], alpha) for j in range(len(edges))]
    what = {"values": f"{a.shape[1]} coordinate(s)",
            "increments": f"the increments of {a.shape[1]} coordinates (first value, successive differences)",
            "values+differences": f"{a.shape[1]} coordinates and their first differences"}[mode]
    return _NaiveBayes(mode, edges, specials, tables,
                       f"naive-Bayes empirical likelihood ratio over {what} ({per} quantile bins each)")


def _split_bound(s0, s1) -> float:
    """Best two-sided Clopper-Pearson threshold bound (delta 0, beta 0.05) of scores on one fold: the
    criterion of the training-sample model choice (a heuristic; validity does not depend on it)."""
    t = candidate_thresholds(s0, s1, 400)
    k_fp, k_fn = oriented_counts(s0, s1, t)
    crit = epsilon_lower_from_rates(cp_upper(k_fp, s0.size, 0.025), cp_upper(k_fn, s1.size, 0.025), 0.0)
    return float(np.max(crit))


def naive_bayes_statistic(train0, train1, *, bins: int | None = None, columns: str = "auto",
                          differences: bool | None = None, alpha: float = 0.5):
    """Sum over columns of per-column empirical log-likelihood ratios on quantile bins (special values
    kept as their own bins).

    The Neyman-Pearson statistic when the columns are independent given the input: the coordinates of
    a noisy histogram, or -- ``columns="increments"`` -- the increments of a cumulative release
    (prefix sums, streaming counters), whose raw coordinates are dependent. ``columns`` is one of
    ``NB_COLUMNS`` or ``"auto"``; ``bins=None`` tries ``NB_BINS``. Whatever is left open is chosen on the
    TRAINING sample alone by two-fold cross-fitting (fit on one half, the best Clopper-Pearson threshold
    bound on the other, averaged over both ways), then refitted on all of it; the description says
    which won. ``differences`` (older interface): True means ``"values+differences"``, False ``"values"``.
    """
    a = numeric_or_raise(train0, "the naive-Bayes attack")
    b = numeric_or_raise(train1, "the naive-Bayes attack")
    if differences is not None:
        columns = "values+differences" if differences else "values"
    if columns != "auto" and columns not in NB_COLUMNS:
        raise ValueError(f"columns must be 'auto' or one of {NB_COLUMNS}, got {columns!r}")
    if bins is not None:
        bins = check_count("bins", bins, minimum=1)
    modes = [columns] if columns != "auto" else (list(NB_COLUMNS) if a.shape[1] > 1 else ["values"])
    n = min(a.shape[0], b.shape[0])
    pers = [bins] if bins is not None else ([k for k in NB_BINS if k * _NB_MIN_PER_BIN <= n // 2] or [NB_BINS[0]])
    configs = [(m, k) for m in modes for k in pers]
    if len(configs) > 1 and n >= 8:
        h0, h1 = a.shape[0] // 2, b.shape[0] // 2
        folds = ((a[:h0], b[:h1], a[h0:], b[h1:]), (a[h0:], b[h1:], a[:h0], b[:h1]))
        score = []
        prepared: dict = {}  # the folds' columns, prepared once for every bin count
        for m, k in configs:
            v = 0.0
            for fa, fb, ga, gb in folds:
                st = _fit_naive_bayes(fa, fb, m, k, alpha, prepared)
                v += _split_bound(st(ga), st(gb))
            score.append(v)
        configs = [configs[int(np.argmax(score))]]
    mode, per = configs[0]
    return _fit_naive_bayes(a, b, mode, per, alpha)


# ------------------------------------------------------------------------------ features
class DefaultFeatures:
    """DP-Sniper-style default features of a batch, with the special values fixed at fit time.

    Numeric outputs: the values (NaN as 0, +-inf as +-1e6), an indicator per special value
    (NaN, +-inf, and values taking >= 1% of a coordinate's training outputs, as DP-Sniper's
    ``FlagsFeatureTransformer``), the sorted values and, per special value, its count in the
    run. Object outputs: :func:`dpaudit.audit.attacks.outputs.object_features`.
    """

    def __init__(self, train):
        self.numeric = is_numeric_batch(train)
        if self.numeric:
            self.k = train.shape[1]
            self.specials = [_special_values(train[:, j]) for j in range(self.k)]
            pooled = _special_values(train.ravel())
            self.row_specials = pooled

    def __call__(self, batch):
        if not self.numeric:
            return object_features(batch)
        b = numeric_or_raise(batch, "these features")
        if b.shape[1] != self.k:
            raise ValueError(f"outputs have {b.shape[1]} values per run, the features were fitted on {self.k}")
        parts = [finite_values(b)]
        for j, sp in enumerate(self.specials):
            for s in sp:
                parts.append((np.isnan(b[:, j]) if math.isnan(s) else b[:, j] == s)[:, None].astype(float))
        if self.k > 1:
            parts.append(np.sort(finite_values(b), axis=1))
            for s in self.row_specials:
                parts.append((np.isnan(b) if math.isnan(s) else b == s).sum(axis=1, keepdims=True).astype(float))
        return np.concatenate(parts, axis=1)


def default_features(train):
    """The default feature map fitted on a training batch (:class:`DefaultFeatures`)."""
    return DefaultFeatures(train)


class _Standardise:
    def __init__(self, X):
        with np.errstate(over="ignore", invalid="ignore"):
            self.mu = X.mean(axis=0)
            sd = X.std(axis=0)
        if not (np.isfinite(self.mu).all() and np.isfinite(sd).all()):  # outputs near 1e308: squares overflow
            scale = np.max(np.abs(X), axis=0) if X.size else np.ones(X.shape[1:])
            scale = np.where(np.isfinite(scale) & (scale > 0), scale, 1.0)
            self.mu, sd = (X / scale).mean(axis=0) * scale, (X / scale).std(axis=0) * scale
        self.sd = np.where(sd > 0, sd, 1.0)

    def __call__(self, X):
        return (X - self.mu) / self.sd


class _Logistic(FittedStatistic):
    family = "logistic"

    def __init__(self, features, scaler, w, b, description):
        self.features, self.scaler, self.w, self.b, self.description = features, scaler, w, b, description

    def __call__(self, batch):
        return self.scaler(np.asarray(self.features(batch), dtype=float)) @ self.w + self.b


def _subsample(X0, X1, rows, seed):
    rng = np.random.default_rng(seed)
    if X0.shape[0] > rows:
        X0 = X0[rng.choice(X0.shape[0], rows, replace=False)]
    if X1.shape[0] > rows:
        X1 = X1[rng.choice(X1.shape[0], rows, replace=False)]
    return X0, X1


def logistic_statistic(train0, train1, *, features=None, l2: float = 1e-4, seed=0, max_iter: int = 200,
                       max_rows: int = MAX_FIT_ROWS):
    """L2-regularised logistic regression (L-BFGS) separating training outputs of x' from x.

    ``features(batch) -> (n, d)`` array (default :func:`default_features` fitted on the training
    data); score = the fitted logit. Deterministic given ``seed`` (used only to subsample beyond
    ``max_rows // 2`` rows per side).
    """
    max_rows = check_count("max_rows", max_rows, minimum=2)
    feats = features if features is not None else DefaultFeatures(train0)
    X0 = np.asarray(feats(train0), dtype=float)
    X1 = np.asarray(feats(train1), dtype=float)
    X0, X1 = _subsample(X0, X1, max_rows // 2, seed)
    X = np.concatenate([X0, X1])
    sc = _Standardise(X)
    Z = sc(X)
    y = np.concatenate([np.zeros(X0.shape[0]), np.ones(X1.shape[0])])
    sgn = 2.0 * y - 1.0
    n, d = Z.shape

    def loss(theta):
        w, b = theta[:d], theta[d]
        z = sgn * (Z @ w + b)
        val = np.mean(np.logaddexp(0.0, -z)) + 0.5 * l2 * (w @ w)
        with np.errstate(over="ignore"):
            g = -sgn / (1.0 + np.exp(z))
        grad = np.concatenate([Z.T @ g / n + l2 * w, [g.mean()]])
        return val, grad

    res = minimize(loss, np.zeros(d + 1), jac=True, method="L-BFGS-B", options={"maxiter": int(max_iter)})
    w, b = res.x[:d], float(res.x[d])
    name = "user features" if features is not None else "default features (values, special-value flags, sorted, counts)"
    return _Logistic(feats, sc, w, b, f"logistic regression on {d} {name}")


class _MLP(FittedStatistic):
    family = "mlp"

    def __init__(self, features, scaler, model, description):
        self.features, self.scaler, self.model, self.description = features, scaler, model, description

    def __call__(self, batch):
        Z = self.scaler(np.asarray(self.features(batch), dtype=float))
        p = self.model.predict_proba(Z)[:, 1]
        with np.errstate(divide="ignore"):
            return np.log(p) - np.log1p(-p)


def mlp_statistic(train0, train1, *, features=None, hidden=(10, 5), seed=0, max_iter: int = 50,
                  max_rows: int = 50_000):
    """A small neural network (scikit-learn ``MLPClassifier``, needs ``dpaudit[learn]``); score = logit."""
    try:
        from sklearn.neural_network import MLPClassifier
    except ImportError:
        raise ValueError("the mlp attack needs scikit-learn: pip install 'dpaudit[learn]'") from None
    import warnings

    feats = features if features is not None else DefaultFeatures(train0)
    X0 = np.asarray(feats(train0), dtype=float)
    X1 = np.asarray(feats(train1), dtype=float)
    X0, X1 = _subsample(X0, X1, max_rows // 2, seed)
    X = np.concatenate([X0, X1])
    sc = _Standardise(X)
    y = np.concatenate([np.zeros(X0.shape[0]), np.ones(X1.shape[0])])
    rs = int(np.random.default_rng(seed).integers(2**31 - 1))
    model = MLPClassifier(hidden_layer_sizes=tuple(hidden), alpha=1e-4, max_iter=int(max_iter), random_state=rs)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # sklearn's ConvergenceWarning at max_iter: the fit is still a valid statistic
        model.fit(sc(X), y)
    return _MLP(feats, sc, model, f"neural network {tuple(hidden)} on {X.shape[1]} features")


class ValueAttack(AttackFamily):
    name = "value"
    description = "the scalar output itself (both orientations)"
    needs_fit = False

    def applicable(self, train0, train1):
        if not is_numeric_batch(train0) or train0.shape[1] != 1:
            return False, "needs one number per run"
        return True, ""

    def fit(self, train0, train1, seed=0, features=None):
        return _Value()


class ProjectionAttack(AttackFamily):
    name = "projection"
    description = "projection of a numeric vector on the training-sample mean difference"

    def applicable(self, train0, train1):
        if not is_numeric_batch(train0) or train0.shape[1] < 2:
            return False, "needs numeric vectors of a fixed length >= 2"
        return True, ""

    def fit(self, train0, train1, seed=0, features=None):
        d = finite_values(train1).mean(axis=0) - finite_values(train0).mean(axis=0)
        nrm = float(np.linalg.norm(d))
        if not math.isfinite(nrm) or nrm == 0.0:
            d = np.zeros(train0.shape[1])
            d[0], nrm = 1.0, 1.0
        return _Projection(d / nrm)


class EmpiricalLRAttack(AttackFamily):
    name = "empirical-lr"
    description = "exact empirical likelihood ratio over output categories (binned or hashed if many)"

    def __init__(self, max_categories: int = DEFAULT_MAX_CATEGORIES):
        self.max_categories = max_categories

    def fit(self, train0, train1, seed=0, features=None):
        return empirical_lr_statistic(train0, train1, max_categories=self.max_categories)


class NaiveBayesAttack(AttackFamily):
    name = "naive-bayes"
    description = ("sum of per-column empirical likelihood ratios (values, increments or both; bins and columns "
                   "chosen by cross-fitting on the training sample)")

    def applicable(self, train0, train1):
        if not is_numeric_batch(train0):
            return False, "needs numeric outputs of a fixed length"
        if train0.shape[1] > MAX_TABLE_COLUMNS:  # one table per column, fitted 7 times: minutes at 10^5 columns
            return False, (f"{train0.shape[1]} values per run, more than {MAX_TABLE_COLUMNS} (one table per "
                           "coordinate); the projection and learned families read them")
        return True, ""

    def fit(self, train0, train1, seed=0, features=None):
        return naive_bayes_statistic(train0, train1)


class LogisticAttack(AttackFamily):
    name = "logistic"
    description = "logistic regression on features (DP-Sniper's classifier)"

    def fit(self, train0, train1, seed=0, features=None):
        return logistic_statistic(train0, train1, features=features, seed=seed)


class MLPAttack(AttackFamily):
    name = "mlp"
    description = "small neural network (10, 5) on features (scikit-learn)"
    requires = "scikit-learn (pip install 'dpaudit[learn]')"
    in_auto = False  # needs an optional extra: used when named (statistic=["auto-real", "mlp"], or "mlp")

    def applicable(self, train0, train1):
        if not sklearn_available():
            return False, "scikit-learn is not installed (pip install 'dpaudit[learn]')"
        return True, ""

    def fit(self, train0, train1, seed=0, features=None):
        return mlp_statistic(train0, train1, features=features, seed=seed)
