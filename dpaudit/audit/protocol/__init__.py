"""Protocols (the third layer of :mod:`dpaudit.audit`): how runs become a certified result.

The two-sample engine with its splitting and chunked scoring (:mod:`.two_sample`), the one-run protocol and its
records (:mod:`.one_run`), claims (:mod:`.claims`), verdicts and their words (:mod:`.verdict`), the result type
(:mod:`.result`) and the neighbouring relation (:mod:`.relation`). The auditors (``dpaudit.audit.mechanism``,
``.optimizer``, ``.training``, ``.floating``, ``.linear_instance``) sit on top and do not import each other.
"""
