"""Node selectors evaluated over the node table's label columns (NodeAffinity's batch forms).

Each requirement becomes a lookup table over the value ids of its key's column, so its cost is one
pass over the requirement's values (or over the key's distinct values, cached, for ``Gt``/``Lt``)
plus one gather over the nodes. The per-node evaluation in :mod:`kubesched.api.nodeaffinity` is
the reference; tests/plugins/test_batch_node_affinity.py proves both agree.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from kubesched.api.labels import (
    DOES_NOT_EXIST,
    DOUBLE_EQUALS,
    EQUALS,
    EXISTS,
    IN,
    NOT_EQUALS,
    NOT_IN,
    Requirement,
    Selector,
)
from kubesched.api.nodeaffinity import NodeSelector, NodeSelectorTerm, PreferredSchedulingTerms, RequiredNodeAffinity
from kubesched.framework.snapshot import Snapshot

Bools = npt.NDArray[np.bool_]
Rows = npt.NDArray[np.intp]

_OBJECT_NAME_FIELD = "metadata.name"


def requirement_mask(snapshot: Snapshot, req: Requirement, rows: Rows) -> Bools:
    t = snapshot.table
    col = t.label_column(req.key)
    op = req.operator
    if op in (IN, EQUALS, DOUBLE_EQUALS):
        lut = col.lut_in(req.values, absent=False)
    elif op in (NOT_IN, NOT_EQUALS):
        lut = col.lut_in(req.values, absent=True, negate=True)
    elif op in (EXISTS, DOES_NOT_EXIST):
        lut = np.full(len(col.strings) + 1, op == EXISTS, dtype=np.bool_)
        lut[0] = op == DOES_NOT_EXIST
    else:  # Gt / Lt: the reference decides once per distinct value
        key = req.key
        lut = col.cached_lut(req, req.matches({}), lambda v: req.matches({key: v}))
    out: Bools = lut[t.take(col.values, rows)]
    return out


def selector_mask(snapshot: Snapshot, sel: Selector, rows: Rows) -> Bools:
    if sel.nothing:
        return np.zeros(len(rows), dtype=np.bool_)
    mask: Bools | None = None
    for req in sel.requirements:
        m = requirement_mask(snapshot, req, rows)
        mask = m if mask is None else mask & m
        if not mask.any():
            break
    return np.ones(len(rows), dtype=np.bool_) if mask is None else mask


def term_mask(snapshot: Snapshot, term: NodeSelectorTerm, rows: Rows) -> Bools:
    if term.errors:
        return np.zeros(len(rows), dtype=np.bool_)
    mask = (
        selector_mask(snapshot, term.label_selector, rows)
        if term.label_selector is not None
        else np.ones(len(rows), dtype=np.bool_)
    )
    for r in term.field_requirements:
        if r.key == _OBJECT_NAME_FIELD:
            pos = snapshot.index.get(r.value)
            same = np.asarray(rows) == pos if pos is not None else np.zeros(len(rows), dtype=np.bool_)
            mask = mask & (same if r.equal else ~same)
        elif (r.value == "") != r.equal:
            # Any other field reads as "": the requirement is the same for every node.
            mask = np.zeros(len(rows), dtype=np.bool_)
    return mask


def node_selector_mask(snapshot: Snapshot, ns: NodeSelector, rows: Rows) -> Bools:
    """``NodeSelector.match`` for each row: any term matches."""
    mask = np.zeros(len(rows), dtype=np.bool_)
    for term in ns.terms:
        mask |= term_mask(snapshot, term, rows)
    return mask


def required_mask(snapshot: Snapshot, required: RequiredNodeAffinity, rows: Rows) -> Bools:
    """``RequiredNodeAffinity.match`` for each row."""
    mask = (
        selector_mask(snapshot, required.selector, rows)
        if required.selector is not None
        else np.ones(len(rows), dtype=np.bool_)
    )
    if required.required is not None and mask.any():
        mask &= node_selector_mask(snapshot, required.required, rows)
    return mask


def preferred_scores(snapshot: Snapshot, terms: PreferredSchedulingTerms, rows: Rows) -> npt.NDArray[np.int64]:
    """``PreferredSchedulingTerms.score`` for each row: the weights of the matching terms, summed."""
    out = np.zeros(len(rows), dtype=np.int64)
    for term, weight in terms.terms:
        out += term_mask(snapshot, term, rows) * weight
    return out
