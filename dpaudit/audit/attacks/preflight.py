"""Check, before any trial runs, that the chosen statistic can read the mechanism's outputs.

Without this check a sampler returning strings (``"yes"``/``"no"``, a candidate's name) audited
with ``statistic="value"`` or a user's ``statistic=lambda b: b.astype(float)`` failed only after
the selection runs, or deep inside a chunk with numpy's "could not convert string to float". The
check draws a tiny probe (:data:`PROBE_SIZE` outputs on each input of the first pair, from a
random stream of its own that no trial uses), puts it in the audit's representation
(:mod:`dpaudit.audit.attacks.outputs`), and then

* with attack families: requires one family that accepts outputs of this form;
* with a callable statistic: calls it on the probe and requires ``PROBE_SIZE`` real scores.

Otherwise it raises one ``ValueError`` that shows the first outputs, says what the statistic
needs and how to map the outputs (``encode=``). A sampler that itself raises on the probe is not
judged here: the audit runs and reports that failure as before (with the chunk that failed).
"""

from __future__ import annotations

import inspect

import numpy as np

from dpaudit.audit.attacks.outputs import SAMPLER_CONTRACT, as_output_batch, describe_outputs, is_numeric_batch
from dpaudit.audit.stats.thresholds import as_scores
from dpaudit.core.describe import describe_value

__all__ = ["PROBE_SIZE", "preflight_outputs", "check_sampler_signature"]

#: outputs drawn on each input of the first pair before the audit starts
PROBE_SIZE = 2
#: spawn-key word of the probe's stream (children of the audit's seed use small indices)
_PROBE_KEY = 0xD9A0D17


def _probe_rng(root: np.random.SeedSequence) -> np.random.Generator:
    seq = np.random.SeedSequence(root.entropy, spawn_key=tuple(root.spawn_key) + (_PROBE_KEY,))
    return np.random.default_rng(seq)


def _first_outputs(raw, n: int = 3) -> str:
    try:
        items = list(raw)[:n] if not isinstance(raw, (str, bytes)) else [raw]
    except TypeError:
        items = [raw]
    return describe_value(items, width=90)


def _hint(raw) -> str:
    try:
        items = list(raw)[:PROBE_SIZE]
    except TypeError:
        items = []
    example = None
    if items and all(isinstance(v, (str, np.str_)) for v in items):
        names = sorted({str(v) for v in items})
        mapping = ", ".join(f"{n!r}: {float(i)}" for i, n in enumerate(names))
        example = f"encode=lambda o: {{{mapping}}}[o]"
    text = ("Map each output to a number (or a fixed-length tuple of numbers) with encode=, "
            + (f"e.g. {example}, " if example else "e.g. encode=lambda o: float(o.score), ")
            + "or use statistic='auto', whose empirical-lr family reads outputs of any form "
            "(strings, tuples, None).")
    return text


def check_sampler_signature(sampler, x) -> None:
    """Raise ``TypeError`` quoting the sampler's contract when ``sampler(x, rng, size)`` cannot bind its
    arguments (the commonest mistake: a forgotten ``rng`` parameter, ``sampler(x, size)``). Callables
    without an introspectable signature (some builtins) are not judged here."""
    try:
        sig = inspect.signature(sampler)
    except (TypeError, ValueError):
        return
    try:
        sig.bind(x, np.random.default_rng(0), PROBE_SIZE)
    except TypeError as err:
        name = getattr(sampler, "__name__", type(sampler).__name__)
        raise TypeError(f"{SAMPLER_CONTRACT}, but {name}{sig} cannot be called as sampler(x, rng, size) ({err}); "
                        "a forgotten rng parameter? Draw the randomness from the rng it is given") from None


def preflight_outputs(sampler, x, x_prime, *, root, encode=None, statistic=None, families=None) -> int:
    """Raise ``ValueError`` before the audit starts if the statistic cannot read the outputs (module docstring).

    Returns the number of mechanism runs the probe drew (0 when the sampler raised on it).
    """
    check_sampler_signature(sampler, x)
    rng = _probe_rng(root)
    raws: list = []
    batches: list = []
    for inp in (x, x_prime):
        try:
            raw = sampler(inp, rng, PROBE_SIZE)
        except Exception:  # the sampler's own failure is reported by the audit, chunk by chunk
            return PROBE_SIZE * len(raws)
        try:
            batch = as_output_batch(raw, PROBE_SIZE, encode)
        except Exception as err:
            if str(err).startswith(SAMPLER_CONTRACT):  # a batch of the wrong size or form: no encode= hint
                raise
            raise ValueError(
                f"the mechanism's outputs cannot be read: {err} (first outputs: {_first_outputs(raw)}). "
                + _hint(raw)) from err
        raws.append(raw)
        batches.append(batch)
    b0, b1 = batches
    form = describe_outputs(b0)
    if callable(statistic):
        for raw, batch in zip(raws, batches):
            try:
                scores = as_scores(statistic(batch), "statistic(outputs)")
            except Exception as err:
                given = ("a float array of shape (size, k)" if is_numeric_batch(batch)
                         else "an object array of output keys (strings, tuples, ...)")
                raise ValueError(
                    f"statistic(outputs) failed on the first {PROBE_SIZE} outputs, before the audit started: "
                    f"{type(err).__name__}: {err}. It receives the batch as {given}; the outputs are {form} "
                    f"(first outputs: {_first_outputs(raw)}). " + _hint(raw)) from err
            if scores.size != PROBE_SIZE:
                raise ValueError(f"statistic(outputs) returned {scores.size} scores for {PROBE_SIZE} outputs "
                                 "(one score per run is needed)")
        return 2 * PROBE_SIZE
    if not families:
        return 2 * PROBE_SIZE
    if is_numeric_batch(b0) and any(f.name == "float-bits" for f in families):
        return 2 * PROBE_SIZE  # its applicability depends on the values (integer-valued or not), not on the form
    reasons = []
    for fam in families:
        ok, why = fam.applicable(b0, b1)
        if ok:
            return 2 * PROBE_SIZE
        reasons.append(f"{fam.name}: {why}")
    raise ValueError(
        f"no chosen attack family can read the mechanism's outputs ({'; '.join(reasons)}); the outputs are "
        f"{form} (first outputs: {_first_outputs(raws[0])}). " + _hint(raws[0]))
