"""The model-free evidence verifier: quotations, values, polarity, roles and citations of each claim
checked against the contract, with the evidence and every normalisation applied.

`document` holds the contract as passages with their citations and search; `text` and `values`
read words, quotations and values (amounts, dates, periods) from text; `checks/` holds one module
per check family (its docstring says which); `verify` runs them all on one claim for its verdict.
"""

from models.verifier.checks import Reason
from models.verifier.checks.verbatim import QUOTED
from models.verifier.document import CitedRef, Document, Source
from models.verifier.verify import (
    INCORRECT,
    NEEDS_REVIEW,
    SUPPORTED,
    UNCONFIRMED,
    UNVERIFIABLE,
    ClaimResult,
    verify_claim,
)

VERSION = "2"  # 2: the learned claim checker decides "supported", "unconfirmed" and its own flags

__all__ = [
    "INCORRECT",
    "NEEDS_REVIEW",
    "QUOTED",
    "SUPPORTED",
    "UNCONFIRMED",
    "UNVERIFIABLE",
    "VERSION",
    "CitedRef",
    "ClaimResult",
    "Document",
    "Reason",
    "Source",
    "verify_claim",
]
