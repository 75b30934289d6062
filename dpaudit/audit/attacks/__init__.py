"""Attacks (the second layer of :mod:`dpaudit.audit`): how outputs become scores.

Output encoding (:mod:`.outputs`), fixed statistics and canaries (:mod:`.statistics`), the attack-family protocol
(:mod:`.base`), the real-valued families (:mod:`.families`) and the bit-level ones (:mod:`.floating`), their registry
(:mod:`.registry`), the contest that picks a family and a neighbouring pair on selection runs (:mod:`.selection`)
and the preflight check of a sampler's outputs (:mod:`.preflight`). Imports only :mod:`dpaudit.audit.stats` below it.
"""
