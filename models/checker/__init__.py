"""The learned claim checker: features of a claim against its document (`features`) and the shipped,
calibrated model that turns them into the probability that the document does not support it (`model`).
Trained by packaging/training/train_claim_checker.py on human-labelled real errors; resources/claim_checker/
holds the model and its data card."""

from models.checker.encoder import shipped_held_out
from models.checker.features import Evidence
from models.checker.model import Assessment, ClaimChecker, shipped

__all__ = ["Assessment", "ClaimChecker", "Evidence", "shipped", "shipped_held_out"]
