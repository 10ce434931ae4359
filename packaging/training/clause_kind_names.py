"""How a claim names each of CUAD's 33 kinds of clause: a short name and one sentence, written for Assay from
CUAD's category descriptions (the kinds' prototypes in kinds.json, beside the learnable wordings 0-2 of the
14 kinds training/cuad_kinds.py words as claims)."""

from __future__ import annotations

DESCRIPTIONS: dict[str, tuple[str, ...]] = {
    "Most Favored Nation": (
        "most favored nation clause",
        "A party gets terms at least as good as any third party receives.",
    ),
    "Competitive Restriction Exception": (
        "exception to a non-compete or exclusivity restriction",
        "The agreement makes an exception to its restrictions on competition or exclusivity.",
    ),
    "Non-Compete": ("non-compete clause", "A party may not compete with the other party."),
    "Exclusivity": ("exclusivity clause", "A party must deal exclusively with the other party."),
    "No-Solicit Of Customers": (
        "non-solicitation of customers",
        "A party may not solicit the other party's customers or clients.",
    ),
    "No-Solicit Of Employees": (
        "non-solicitation of employees",
        "A party may not solicit or hire the other party's employees.",
    ),
    "Non-Disparagement": ("non-disparagement clause", "A party may not disparage the other party."),
    "Termination For Convenience": (
        "termination for convenience",
        "A party may terminate the agreement without cause on notice.",
    ),
    "Rofr/Rofo/Rofn": (
        "right of first refusal",
        "A party has a right of first refusal, first offer or first negotiation.",
    ),
    "Change Of Control": (
        "change of control clause",
        "A change of control of a party gives the other party rights to consent or terminate.",
    ),
    "Anti-Assignment": ("anti-assignment clause", "A party needs consent to assign the agreement."),
    "Revenue/Profit Sharing": (
        "revenue or profit sharing",
        "A party must share its revenue or profits with the other party.",
    ),
    "Price Restrictions": (
        "price restrictions",
        "The agreement restricts a party's ability to raise or reduce prices.",
    ),
    "Minimum Commitment": (
        "minimum purchase commitment",
        "A party must buy a minimum quantity or pay a minimum amount.",
    ),
    "Volume Restriction": (
        "volume restriction",
        "The agreement caps or restricts the volume a party may use or buy.",
    ),
    "Ip Ownership Assignment": (
        "intellectual property assignment",
        "Intellectual property one party creates is assigned to the other party.",
    ),
    "Joint Ip Ownership": (
        "joint ownership of intellectual property",
        "The parties jointly own some intellectual property.",
    ),
    "License Grant": ("license grant", "One party grants the other a license."),
    "Non-Transferable License": (
        "non-transferable license",
        "The license granted cannot be transferred or sublicensed.",
    ),
    "Affiliate License-Licensor": (
        "license granted by the licensor's affiliates",
        "The licensor's affiliates also license their intellectual property.",
    ),
    "Affiliate License-Licensee": (
        "license extends to the licensee's affiliates",
        "The licensee's affiliates may use the licensed intellectual property.",
    ),
    "Unlimited/All-You-Can-Eat-License": (
        "unlimited license",
        "The license allows unlimited use, copies or users.",
    ),
    "Irrevocable Or Perpetual License": (
        "irrevocable or perpetual license",
        "A party is granted a perpetual or irrevocable license.",
    ),
    "Source Code Escrow": ("source code escrow", "Source code must be deposited with an escrow agent."),
    "Post-Termination Services": (
        "post-termination services",
        "A party must keep providing services or support after the agreement ends.",
    ),
    "Audit Rights": ("audit rights", "A party may audit the other party's books and records."),
    "Uncapped Liability": (
        "uncapped liability",
        "A party's liability is unlimited for certain breaches.",
    ),
    "Cap On Liability": ("limitation of liability", "A party's liability is capped."),
    "Liquidated Damages": (
        "liquidated damages",
        "A party must pay liquidated damages or a termination fee.",
    ),
    "Warranty Duration": ("warranty period", "The warranty lasts for a stated period."),
    "Insurance": ("insurance requirement", "A party must maintain insurance."),
    "Covenant Not To Sue": (
        "covenant not to sue",
        "A party agrees not to sue or challenge the other party's intellectual property.",
    ),
    "Third Party Beneficiary": (
        "third party beneficiary",
        "A third party may enforce rights under the agreement as a beneficiary.",
    ),
}
