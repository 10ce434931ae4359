"""CUAD's kinds of clause as claims: the question asked and six wordings of the claim that the contract has
such a clause, written for Assay (training/cuad_claims.py builds the labelled claims from them)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Kind:
    """A kind of clause: CUAD's category, the question asked and six wordings of the claim that it is there."""

    key: str
    category: str  # the column of master_clauses.csv
    question: str
    wordings: tuple[str, str, str, str, str, str]


# Every wording must hold for any clause the experts marked as that kind, whichever party it binds: "a
# party", never "neither party" or "each party".
KINDS = (
    Kind(
        "non-compete",
        "Non-Compete",
        "Does the agreement restrict a party from competing?",
        (
            "The agreement contains a non-compete clause.",
            "A party is restricted from competing with the other party.",
            "One of the parties may not engage in a competing business.",
            "The contract includes a covenant not to compete.",
            "A party's freedom to compete, or to operate in a certain business or territory, is restricted.",
            "The agreement limits a party's ability to offer competing products or services.",
        ),
    ),
    Kind(
        "exclusivity",
        "Exclusivity",
        "Does the agreement contain an exclusivity commitment?",
        (
            "The agreement contains an exclusivity provision.",
            "A party is bound to deal exclusively with the other party.",
            "The relationship between the parties is exclusive.",
            "The contract includes an exclusive dealing commitment.",
            "One party is granted exclusive rights under the agreement.",
            "The agreement grants exclusivity to one of the parties.",
        ),
    ),
    Kind(
        "no-solicit-of-employees",
        "No-Solicit Of Employees",
        "Does the agreement restrict soliciting or hiring the other party's employees?",
        (
            "The agreement contains a non-solicitation clause covering employees.",
            "A party may not solicit or hire the other party's employees.",
            "A party is barred from recruiting the other party's staff.",
            "The contract includes a no-hire or employee non-solicitation provision.",
            "A party is restricted from soliciting the other party's employees or contractors.",
            "Hiring away the other side's personnel is restricted under the agreement.",
        ),
    ),
    Kind(
        "termination-for-convenience",
        "Termination For Convenience",
        "Can a party terminate the agreement for convenience?",
        (
            "A party may terminate the agreement for convenience.",
            "The agreement can be terminated without cause by giving notice.",
            "A party has the right to end the contract without cause upon notice.",
            "The contract contains a termination for convenience clause.",
            "One of the parties may end the agreement at will on written notice.",
            "The agreement allows a party to terminate without any breach by the other party, simply by giving notice.",
        ),
    ),
    Kind(
        "change-of-control",
        "Change Of Control",
        "Does the agreement contain a change of control provision?",
        (
            "The agreement contains a change of control clause.",
            "A change of control of a party gives the other party a right to terminate, or requires its consent or"
            " notice.",
            "If a party is acquired or merges, the other party must consent, be notified, or may terminate the"
            " agreement.",
            "The contract addresses what happens if a party undergoes a change of control.",
            "A merger or acquisition of a party triggers consent, notice or termination rights under the agreement.",
            "The agreement includes change-of-control provisions.",
        ),
    ),
    Kind(
        "anti-assignment",
        "Anti-Assignment",
        "Does the agreement restrict assignment?",
        (
            "The agreement restricts a party's right to assign it.",
            "A party needs the other party's consent, or must give it notice, to assign the agreement.",
            "The contract contains an anti-assignment clause.",
            "Assignment of the agreement to a third party requires the other party's consent or notice.",
            "A party cannot freely transfer the agreement to a third party.",
            "The agreement limits a party's ability to assign its rights or obligations.",
        ),
    ),
    Kind(
        "audit-rights",
        "Audit Rights",
        "Does a party have audit rights under the agreement?",
        (
            "A party has the right to audit the other party.",
            "The agreement grants audit rights.",
            "A party may inspect the other party's books and records.",
            "The contract contains an audit clause.",
            "A party may examine the other party's books, records or premises to check compliance.",
            "One party is entitled to audit the other's records under the agreement.",
        ),
    ),
    Kind(
        "cap-on-liability",
        "Cap On Liability",
        "Does the agreement limit liability?",
        (
            "The agreement limits a party's liability.",
            "Liability under the agreement is capped or otherwise limited.",
            "The contract contains a limitation of liability clause.",
            "A party's liability for breach is limited under the agreement.",
            "The agreement restricts the damages a party can recover.",
            "There is a limitation on liability in the agreement.",
        ),
    ),
    Kind(
        "liquidated-damages",
        "Liquidated Damages",
        "Does the agreement provide for liquidated damages or a termination fee?",
        (
            "The agreement provides for liquidated damages.",
            "A party must pay liquidated damages or a termination fee in certain cases.",
            "The contract contains a liquidated damages or termination fee clause.",
            "A fixed sum is payable as damages for breach or as a fee on termination.",
            "The agreement sets a pre-agreed amount of damages or a termination fee.",
            "A party owes a termination fee or liquidated damages under the agreement.",
        ),
    ),
    Kind(
        "insurance",
        "Insurance",
        "Does the agreement require a party to maintain insurance?",
        (
            "A party must maintain insurance.",
            "The agreement requires a party to carry insurance.",
            "The contract contains an insurance clause.",
            "One of the parties is obliged to keep insurance coverage in place.",
            "A party has to hold insurance for the benefit of the other party.",
            "The agreement sets insurance requirements for a party.",
        ),
    ),
    Kind(
        "warranty-duration",
        "Warranty Duration",
        "Does the agreement set the duration of a warranty?",
        (
            "The agreement states how long a warranty lasts.",
            "The warranty is limited to a stated period.",
            "The contract specifies a warranty period.",
            "Products or services are warranted against defects for a set period of time.",
            "The agreement includes a warranty with a fixed duration.",
            "A warranty period is defined in the agreement.",
        ),
    ),
    Kind(
        "ip-ownership-assignment",
        "Ip Ownership Assignment",
        "Does the agreement assign intellectual property from one party to the other?",
        (
            "Intellectual property created by one party becomes the property of the other party.",
            "The agreement assigns intellectual property from one party to the other.",
            "The contract contains an IP assignment clause.",
            "A party must assign to the other party its rights in intellectual property it develops.",
            "Ownership of some intellectual property passes from one party to the other under the agreement.",
            "One party will own the intellectual property that the other party creates.",
        ),
    ),
    Kind(
        "most-favored-nation",
        "Most Favored Nation",
        "Does the agreement contain a most favored nation clause?",
        (
            "The agreement contains a most favored nation clause.",
            "A party is entitled to terms at least as favourable as those given to any third party.",
            "If better terms are offered to others, a party must receive the same terms.",
            "The contract includes a most-favoured-customer provision.",
            "A party is guaranteed prices or terms no worse than what third parties receive.",
            "The agreement gives a party the benefit of any better terms granted to third parties.",
        ),
    ),
    Kind(
        "license-grant",
        "License Grant",
        "Does the agreement grant a license?",
        (
            "The agreement grants a license.",
            "One party grants the other a license.",
            "A party is licensed to use the other party's intellectual property.",
            "The contract contains a license grant.",
            "The agreement licenses rights from one party to the other.",
            "A party receives a license under the contract.",
        ),
    ),
    Kind(
        "governing-law",
        "Governing Law",
        "Which law governs the agreement?",
        (
            "The agreement is governed by {laws}.",
            "This contract is construed in accordance with {laws}.",
            "The agreement is to be interpreted under {laws}.",
            "The parties chose {laws} to govern the contract.",
            "Questions about the agreement's interpretation are decided under {laws}.",
            "This agreement is subject to {laws}.",
        ),
    ),
)
GOVERNING_LAW = KINDS[-1]
# The wrong jurisdictions a synthetic contradiction (or a never-made claim, where the experts found no
# governing law) may name, with the word that must not occur anywhere in the contract.
JURISDICTIONS = (
    ("New York", "New York"),
    ("California", "California"),
    ("Delaware", "Delaware"),
    ("Texas", "Texas"),
    ("Florida", "Florida"),
    ("Illinois", "Illinois"),
    ("Pennsylvania", "Pennsylvania"),
    ("Massachusetts", "Massachusetts"),
    ("Colorado", "Colorado"),
    ("England and Wales", "England"),
    ("Ontario, Canada", "Ontario"),
    ("Singapore", "Singapore"),
    ("Switzerland", "Switzerland"),
)
